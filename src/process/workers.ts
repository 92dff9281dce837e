import cluster from 'node:cluster';
import type { Logger } from 'pino';
import type { Service } from '../app/services.js';
import type { Config } from '../config/config.js';
import { handoverWaitMs } from './listeners.js';
import { stderrLine } from './log.js';
import type { RateCounts } from '../http/rate-limit.js';
import type { WorkerRole } from './protocol.js';
import { SupervisorRateCounts } from './rate-counts.js';
import { relayRevocation } from './revocations.js';
import { clean, described, StartFailed, versions, WorkerProcess, type Exit } from './worker.js';

/**
 * The supervisor's workers, as one service (process/supervisor.ts): WEB_CONCURRENCY serving processes
 * (process/serving.ts), forked with node:cluster so that they share the listening socket, which the
 * supervisor holds for as long as one of them listens. It starts them, replaces one that crashes,
 * reloads them all from the code installed now (SIGHUP: `reload`), and stops them (`stop`, by the signal
 * `stopWith` chose). The supervisor runs none of the service's code: a reload leaves nothing old behind.
 */

/** A worker that crashed after it served is replaced after this pause (no tight crash loop). */
const RESPAWN_DELAY_MS = 1000;
/** How long a reload's new worker serves beside the old one before that one hands over (`replace` says why). */
const RELOAD_SETTLE_MS = 2000;
/** How long past a worker's own limit (its drain, then SHUTDOWN_TIMEOUT_MS) the supervisor waits before killing it. */
const KILL_MARGIN_MS = 5000;
/** A scrape fails when a worker has not answered with its metrics within this. */
const METRICS_TIMEOUT_MS = 5000;

export class Workers implements Service {
  readonly name = 'workers';
  /** The worker that serves in each slot; undefined while one that crashed waits to be replaced. */
  private readonly slots: Array<WorkerProcess | undefined>;
  private readonly members = new Set<WorkerProcess>();
  /** Slots whose worker a reload is replacing: a crash there is not replaced, the reload's new worker takes over. */
  private readonly replacing = new Set<number>();
  private stopSignal: 'SIGTERM' | 'SIGINT' | undefined;
  private serving = false;
  private reloading: Promise<void> | undefined;
  private reloadAgain = false;
  private requests = 0;
  /** The rate limits' counts of several workers on SQLite (process/rate-counts.ts); one worker counts its own. */
  private readonly rates: SupervisorRateCounts | undefined;

  constructor(
    private readonly config: Config,
    private readonly log: Logger,
    /** Called when the workers cannot go on (a replacement that cannot start): the supervisor stops, exit 1. */
    private readonly fatal: (reason: string) => void,
  ) {
    this.slots = Array.from({ length: config.webConcurrency }, () => undefined);
    this.rates = config.webConcurrency > 1 && config.rateLimitPerMinute > 0 ? new SupervisorRateCounts() : undefined;
    // One worker accepts its connections itself, as a lone process would; several take turns (the supervisor
    // hands each connection on), which spreads them evenly.
    cluster.schedulingPolicy = config.webConcurrency === 1 ? cluster.SCHED_NONE : cluster.SCHED_RR;
  }

  /** Forks every worker, resolving once all serve; when one exits first, stops the others and throws StartFailed. */
  async start(): Promise<void> {
    const count = this.slots.length;
    if (count > 1) this.tell('info', `starting ${count} worker processes`);
    const started = this.slots.map((_, slot) => (this.slots[slot] = this.fork({ slot, announce: slot === 0, backups: slot === 0 })));
    const ready = await Promise.all(started.map((member) => member.ready));
    // Stopped while starting: the stop waits for them.
    if (this.stopSignal) return;
    const failed = started.find((_, i) => !ready[i]);
    if (failed === undefined) {
      this.serving = true;
      this.log.info({ workers: started.map((m) => m.pid), version: versions(started) }, `supervising ${count} worker${count === 1 ? '' : 's'}`);
      return;
    }
    for (const member of this.members) member.kill('SIGINT');
    const exit = await failed.exited;
    await Promise.all([...this.members].map((member) => member.exited));
    const why = `worker ${failed.pid} could not start (${described(exit)})${failed.failure ? `: ${failed.failure}` : ''}`;
    this.log.error(why);
    // A worker that exited by itself said why on stderr; one killed by a signal could not.
    throw new StartFailed(why, exit.signal === null);
  }

  /** SIGHUP: replaces every worker, one at a time, by one running the code installed now; see reloadAll. */
  reload(): void {
    if (this.stopSignal) return this.log.warn('SIGHUP while stopping: no reload');
    if (!this.serving) return this.tell('warn', 'SIGHUP while starting: no reload (send it again once the service serves)');
    if (this.reloading) {
      this.reloadAgain = true;
      return this.log.info('SIGHUP during a reload: another reload follows this one');
    }
    this.reloading = this.reloadAll().finally(() => (this.reloading = undefined));
  }

  /** The signal the stop sends: SIGTERM (the default) drains first, SIGINT stops at once. */
  stopWith(signal: 'SIGTERM' | 'SIGINT'): void {
    this.stopSignal = signal;
  }

  /** Stops every worker by the signal stopWith chose, killing those still running past their limit; throws when one did not stop cleanly. */
  async stop(): Promise<void> {
    const signal = (this.stopSignal ??= 'SIGTERM');
    const members = [...this.members];
    for (const member of members) member.kill(signal);
    const limit = (signal === 'SIGTERM' ? this.config.shutdownDrainMs : 0) + this.config.shutdownTimeoutMs + KILL_MARGIN_MS;
    const timer = setTimeout(() => {
      this.log.error(`workers still running ${limit / 1000} s after ${signal}: killing them`);
      this.kill();
    }, limit);
    const exits = await Promise.all(members.map((member) => member.exited));
    clearTimeout(timer);
    const unclean = members.filter((_, i) => !clean(exits[i]!)).map((member, i) => `worker ${member.pid} (${described(exits[i]!)})`);
    if (unclean.length > 0) throw new Error(`did not stop cleanly: ${unclean.join(', ')}`);
  }

  /**
   * Every worker's metrics (METRICS_PORT), as their registries give them, by worker: those serving, and those handing
   * over (they still count); not those starting, which have counted nothing yet and would not answer before
   * their registry is made. A worker that exits meanwhile answers nothing; one that does not answer within
   * METRICS_TIMEOUT_MS fails the scrape.
   */
  async metrics(): Promise<Map<WorkerProcess, unknown[]>> {
    const request = ++this.requests;
    const asked = [...this.members].filter((member) => member.state !== 'starting');
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`a worker did not answer with its metrics within ${METRICS_TIMEOUT_MS / 1000} s`)),
        METRICS_TIMEOUT_MS,
      );
    });
    try {
      const answers = await Promise.race([Promise.all(asked.map((member) => member.metrics(request))), late]);
      return new Map(asked.map((member, i) => [member, answers[i]!]));
    } finally {
      clearTimeout(timer);
      for (const member of asked) member.forget(request);
    }
  }

  /** Kills every worker at once (a second signal, or a limit passed). */
  kill(): void {
    for (const member of this.members) member.kill('SIGKILL');
  }

  /**
   * Replaces the workers slot by slot: a new worker is forked (running the code on disk now, whatever the
   * supervisor's own version), and only once it has served beside it for RELOAD_SETTLE_MS, on the same
   * socket, is the old one told to hand over (it takes no new connection, finishes what it has and exits
   * once its clients have dropped their connections: process/listeners.ts): no moment without a worker
   * taking connections. The next slot's does not wait for the old one to be gone. A new worker that exits
   * before that, or is not ready within RELOAD_TIMEOUT_MS, ends the reload: the old ones keep serving, and
   * the log and stderr say why.
   */
  private async reloadAll(): Promise<void> {
    do {
      this.reloadAgain = false;
      const before = versions(this.slots);
      this.tell(
        'info',
        `SIGHUP: reloading ${this.slots.length} worker${this.slots.length === 1 ? '' : 's'} from the code installed now (version ${before} serving)`,
      );
      let failure: string | undefined;
      for (let slot = 0; slot < this.slots.length && failure === undefined && !this.stopSignal; slot++) failure = await this.replace(slot);
      // Stopped meanwhile: the stop has taken over every worker, the new one included.
      if (this.stopSignal) return;
      if (failure === undefined)
        this.tell('info', `reloaded: version ${before} → ${versions(this.slots)}`, { from: before, to: versions(this.slots) });
      else this.tell('error', `reload failed: ${failure}; the workers of version ${versions(this.slots)} keep serving`);
      // A SIGHUP during a reload that fails (the release mended meanwhile) is still answered by a reload.
    } while (this.reloadAgain && !this.stopSignal);
  }

  /**
   * Replaces the worker of `slot`; answers why it could not (the old one serving on), or undefined. One
   * worker starts for a slot at a time: a restart of a crashed one still starting there is waited for
   * (and then replaced), and no restart starts while the reload's own worker does (`respawn`).
   */
  private async replace(slot: number): Promise<string | undefined> {
    this.replacing.add(slot);
    try {
      const restarted = this.slots[slot];
      if (restarted?.state === 'starting') {
        this.log.info(`reload: worker ${restarted.pid}, started in place of one that exited, is starting; the reload waits for it`);
        const ready = await this.readyWithin(restarted);
        const why = ready === 'late' ? `was not ready within RELOAD_TIMEOUT_MS (${this.config.reloadTimeoutMs / 1000} s)` : 'could not start';
        if (ready !== true) return `worker ${restarted.pid}, started in place of one that exited, ${why}`;
      }
      const old = this.slots[slot];
      const next = this.fork({ slot, announce: false, backups: slot === 0, ...(old?.version !== undefined && { replaces: old.version }) });
      const ready = await this.readyWithin(next);
      if (ready !== true) {
        // It serves nothing yet: nothing to finish.
        if (ready === 'late') next.kill('SIGKILL');
        const exit = await next.exited;
        // Its old worker crashed meanwhile: the slot is empty, and no one else fills it.
        if (this.slots[slot] === undefined) this.respawnLater(slot);
        return ready === 'late'
          ? `the new worker ${next.pid} was not ready within RELOAD_TIMEOUT_MS (${this.config.reloadTimeoutMs / 1000} s)`
          : `the new worker ${next.pid} exited before it was ready (${described(exit)})${next.failure ? `: ${next.failure}` : ''}`;
      }
      // A release that crashes a moment after it listens (something it starts then fails) fails the reload while
      // the old worker still serves: told to hand over at once, it was gone, its slot left to the broken release.
      const early = await next.exitWithin(RELOAD_SETTLE_MS);
      if (early !== undefined) {
        if (this.slots[slot] === undefined) this.respawnLater(slot);
        return `the new worker ${next.pid} exited within ${RELOAD_SETTLE_MS / 1000} s of being ready (${described(early)})${next.failure ? `: ${next.failure}` : ''}`;
      }
      // The worker in the slot now: `old`, or none if it crashed meanwhile.
      const current = this.slots[slot];
      this.slots[slot] = next;
      if (current === undefined || current.state !== 'serving' || this.stopSignal) return undefined;
      current.state = 'leaving';
      this.log.info({ old: current.pid, new: next.pid }, `worker ${next.pid} serves in place of ${current.pid}, which hands over`);
      current.send({ plantStore: 'handover' });
      void this.watchHandover(current);
      return undefined;
    } finally {
      this.replacing.delete(slot);
    }
  }

  /** True once `member` serves; false when it exited first; 'late' when RELOAD_TIMEOUT_MS passed first. */
  private async readyWithin(member: WorkerProcess): Promise<boolean | 'late'> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), this.config.reloadTimeoutMs)));
    try {
      return await Promise.race([member.ready, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** A worker handing over, until it exits: killed past its limits, logged when it did not stop cleanly. */
  private async watchHandover(old: WorkerProcess): Promise<void> {
    const limit = handoverWaitMs(this.config) + this.config.shutdownTimeoutMs + KILL_MARGIN_MS;
    const kill = setTimeout(() => {
      this.log.error(`worker ${old.pid} still handing over after ${limit / 1000} s: killing it`);
      old.kill('SIGKILL');
    }, limit);
    const exit = await old.exited;
    clearTimeout(kill);
    if (clean(exit)) this.log.info(`worker ${old.pid} handed over and exited`);
    else this.log.warn(`worker ${old.pid} did not stop cleanly as it handed over (${described(exit)})`);
  }

  private fork(role: WorkerRole): WorkerProcess {
    // A worker handing over: its counts go to the one now in its place. One revoking a token: the others forget it.
    const handingOver = (counts: RateCounts) => {
      const successor = this.slots[role.slot];
      if (successor !== undefined && successor !== member) successor.send({ plantStore: 'rate-counts', counts });
    };
    const revoked = (tokenId: string): Promise<void> => relayRevocation(this.members, member, tokenId);
    const countRates = this.rates;
    const member: WorkerProcess = new WorkerProcess({ ...role, relaysRevocations: true, ...(countRates && { countsRates: true }) }, handingOver, {
      countRates,
      revoked,
    });
    this.members.add(member);
    void member.exited.then((exit) => {
      this.members.delete(member);
      this.exited(member, exit);
    });
    return member;
  }

  /** A worker exited: a crash of one that served is replaced; the others are the business of whoever waits on them. */
  private exited(member: WorkerProcess, exit: Exit): void {
    const slot = member.role.slot;
    // Not in its slot: a reload's new worker before it took the slot over, whose reload says what happened.
    if (this.stopSignal || member.state !== 'serving' || this.slots[slot] !== member) return;
    this.slots[slot] = undefined;
    this.tell('warn', `worker ${member.pid} exited (${described(exit)}); starting another`);
    if (!this.replacing.has(slot)) this.respawnLater(slot);
  }

  private respawnLater(slot: number): void {
    setTimeout(() => void this.respawn(slot), RESPAWN_DELAY_MS);
  }

  /**
   * A new worker in an empty slot; one that cannot start ends the service (systemd's Restart= takes it from
   * there). Not while a reload replaces the slot: its new worker fills it, and a second one started there
   * would serve outside every slot, never reloaded.
   */
  private async respawn(slot: number): Promise<void> {
    if (this.stopSignal || this.slots[slot] !== undefined || this.replacing.has(slot)) return;
    const member = (this.slots[slot] = this.fork({ slot, announce: false, backups: slot === 0 }));
    if (await member.ready) return;
    if (this.slots[slot] === member) this.slots[slot] = undefined;
    if (this.stopSignal) return;
    const exit = await member.exited;
    this.fatal(`worker ${member.pid}, replacing one that exited, could not start (${described(exit)})${member.failure ? `: ${member.failure}` : ''}`);
  }

  /** In the log, and on stderr for the operator (the events worth a line there: crashes, reloads). */
  private tell(level: 'info' | 'warn' | 'error', message: string, details: object = {}): void {
    this.log[level](details, message);
    stderrLine(message);
  }
}

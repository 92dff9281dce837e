import { readdirSync, readFileSync } from 'node:fs';

/**
 * What the kernel knows about a server process: the benchmark cannot ask a child for process.cpuUsage(),
 * so it reads /proc (Linux). Undefined elsewhere.
 */

/** clock ticks per second for /proc/<pid>/stat; 100 on every Linux this runs on (getconf CLK_TCK). */
const CLOCK_TICKS = 100;

/**
 * The process and its descendants. `plant-store serve` runs as a supervisor and the workers it forks (since
 * 1.1.0): what the service costs is the sum over them, and the process that serves is the worker.
 */
export function processTree(pid: number): number[] {
  try {
    const children = readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
      readFileSync(`/proc/${pid}/task/${tid}/children`, 'latin1').split(' ').filter(Boolean).map(Number),
    );
    return [pid, ...children.flatMap(processTree)];
  } catch {
    return [pid];
  }
}

/** The process that serves: a supervisor's first worker, or the process itself when it serves alone. */
export function servingPid(pid: number): number {
  return processTree(pid)[1] ?? pid;
}

function statCpu(path: string): number | undefined {
  try {
    const stat = readFileSync(path, 'latin1');
    // Fields after the command name, which is in parentheses and may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

/**
 * CPU seconds (user + system) the service has used so far: all threads of the process and its descendants
 * (a supervisor and its workers), or with `mainThread` the main thread of the process that serves only.
 */
export function cpuSeconds(pid: number, mainThread = false): number | undefined {
  if (mainThread) {
    const serving = servingPid(pid);
    return statCpu(`/proc/${serving}/task/${serving}/stat`);
  }
  const each = processTree(pid).map((one) => statCpu(`/proc/${one}/stat`));
  return each[0] === undefined ? undefined : each.reduce<number>((sum, cpu) => sum + (cpu ?? 0), 0);
}

/** Peak resident memory (VmHWM) in MB, summed over the process and its descendants (each one's own peak). */
export function peakRssMb(pid: number): number | undefined {
  const each = processTree(pid).map((one) => {
    try {
      const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${one}/status`, 'latin1'));
      return match ? Number(match[1]) / 1024 : undefined;
    } catch {
      return undefined;
    }
  });
  return each[0] === undefined ? undefined : each.reduce<number>((sum, mb) => sum + (mb ?? 0), 0);
}

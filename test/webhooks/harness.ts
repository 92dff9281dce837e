import type { after } from 'node:test';
import type { Config } from '../../src/config/config.js';
import { Sender, type SenderOptions } from '../../src/webhooks/delivery.js';
import { Dispatcher, type DispatcherSettings, type Yield } from '../../src/webhooks/dispatcher.js';
import type { Tracing } from '../../src/tracing/sdk.js';
import { testApp, type TestApp } from '../helpers.js';
import { Receiver } from './receiver.js';

export const quietLog = { warn: () => undefined, debug: () => undefined, error: () => undefined };

export interface WebhookHarness {
  t: TestApp;
  receiver: Receiver;
  dispatcher: Dispatcher;
  /** Registers the receiver (or `url`) over HTTP; the answer's body. */
  register: (body?: Record<string, unknown>) => Promise<{ id: string; secret: string; url: string; events: string[] }>;
}

/**
 * The app in-process (private networks allowed, so that the loopback receiver can be reached), a
 * receiver, and a dispatcher delivering from the app's store with a compressed retry schedule.
 */
export async function webhookHarness(
  cleanup: typeof after,
  options: {
    dispatcher?: Partial<DispatcherSettings>;
    sender?: Partial<SenderOptions>;
    config?: Partial<Config>;
    pressure?: Yield;
    /** The dispatcher's log (quiet unless given). */
    log?: ConstructorParameters<typeof Dispatcher>[3];
    /** Traces the app, its store and the deliveries, as the server does with tracing on. */
    tracing?: Tracing;
  } = {},
): Promise<WebhookHarness> {
  // after() hooks run in the order they were registered: the dispatcher must stop before the store closes.
  let stop = async (): Promise<void> => undefined;
  cleanup(() => stop());
  const t = await testApp(cleanup, { config: { webhookAllowPrivateNetworks: true, ...options.config }, tracing: options.tracing });
  const receiver = await Receiver.start(cleanup);
  const settings: DispatcherSettings = {
    concurrency: 4,
    timeoutMs: 2000,
    retrySchedule: [0.05, 0.05],
    disableAfterHours: 120,
    retentionDays: 30,
    ...options.dispatcher,
  };
  const sender = new Sender({ timeoutMs: settings.timeoutMs, allowPrivateNetworks: true, ...options.sender });
  const deliveries = options.tracing ? options.tracing.traceDeliveries(sender) : sender;
  const dispatcher = new Dispatcher(t.store.webhooks, deliveries, settings, options.log ?? quietLog, options.pressure);
  dispatcher.start();
  stop = async () => {
    await dispatcher.stop(100);
    await sender.close();
  };
  return {
    t,
    receiver,
    dispatcher,
    register: async (body = {}) => {
      const res = await t.call('POST', '/webhooks', { body: { url: receiver.url, ...body } });
      if (res.statusCode !== 201) throw new Error(`register: ${res.statusCode} ${res.payload}`);
      return res.json();
    },
  };
}

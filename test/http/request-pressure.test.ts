import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, describe, it } from 'node:test';
import { RequestPressure, type Load } from '../../src/http/request-pressure.js';

/**
 * A RequestPressure on a server that is never listened on, its load set by the test: window(load, served)
 * sets the load, counts `served` requests, takes one window's sample and says whether the pressure is high.
 */
function gauge(): { window: (load: Partial<Load>, served: number) => boolean; reliefs: () => number } {
  const server = createServer();
  const load: Load = { cpu: 0, loop: 0 };
  const pressure = new RequestPressure(server, undefined, () => load);
  pressure.start();
  after(() => pressure.stop());
  let reliefs = 0;
  pressure.onRelief(() => reliefs++);
  return {
    window: (set, served) => {
      Object.assign(load, set);
      for (let i = 0; i < served; i++) server.emit('request');
      pressure.sample();
      return pressure.high;
    },
    reliefs: () => reliefs,
  };
}

describe('request pressure', () => {
  it("where the database is a server of its own: high while writes gather behind its commits, whatever the process's CPU", () => {
    const { window, reliefs } = gauge();
    assert.equal(window({ cpu: 0.4, loop: 0.3, writesPerBatch: 3 }, 10), false, 'a few writes a batch: the database keeps up');
    assert.equal(window({ writesPerBatch: 30 }, 10), true, 'writes gather behind each commit: at capacity');
    assert.equal(window({ writesPerBatch: 8 }, 10), true, 'between the thresholds: unchanged');
    assert.equal(window({ writesPerBatch: 2 }, 10), false);
    assert.equal(reliefs(), 1);
  });

  it('high while requests are served with the event loop nearly full, with hysteresis; relief is announced', () => {
    const { window, reliefs } = gauge();
    assert.equal(window({ loop: 0.99 }, 0), false, 'no requests: background work is not in the way of any');
    assert.equal(window({ loop: 0.99 }, 10), true);
    assert.equal(window({ loop: 0.8 }, 10), true, 'between the thresholds: unchanged');
    assert.equal(window({ loop: 0.5 }, 10), false);
    assert.equal(reliefs(), 1);
    assert.equal(window({ loop: 0.95 }, 1), true);
    assert.equal(window({}, 0), false, 'requests stopped: relief at once');
    assert.equal(reliefs(), 2);
  });

  it('high while the process uses nearly all the CPU it may, whatever the main thread; relief once both fall', () => {
    const { window, reliefs } = gauge();
    assert.equal(window({ cpu: 0.87, loop: 0.5 }, 100), false, 'deliveries at a fifth of the maximum rate: room left');
    assert.equal(window({ cpu: 0.92 }, 100), true, 'requests fill the core (its disk waits aside)');
    assert.equal(window({ cpu: 0.85 }, 100), true, 'between the thresholds: unchanged');
    assert.equal(window({ cpu: 0.7, loop: 0.8 }, 100), true, 'the CPU fell but the main thread is still between its thresholds');
    assert.equal(window({ cpu: 0.7, loop: 0.5 }, 100), false);
    assert.equal(reliefs(), 1);
  });
});

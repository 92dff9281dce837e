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
    assert.equal(window({ loop: 0.95 }, 20), true, 'twice the requests of the last closed window: the loop they need is past 90%');
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

  describe('deliveries filling the room the requests leave', () => {
    /** A gauge whose gate closed once and measured the requests alone: by default 0.6 of the CPU and 0.5 of the loop for 100 requests. */
    function measured(alone: Load = { cpu: 0.6, loop: 0.5 }): ReturnType<typeof gauge> {
      const gauge_ = gauge();
      assert.equal(gauge_.window({ cpu: 0.99, loop: 0.99 }, 100), true, 'no cost measured yet: the whole measure decides');
      assert.equal(gauge_.window(alone, 100), false, 'deliveries at a trickle: the requests alone');
      return gauge_;
    }

    it('keep the gate open: a window is judged by its requests times what one cost while the gate was closed', () => {
      const { window, reliefs } = measured();
      assert.equal(window({ cpu: 0.99, loop: 0.99 }, 100), false, 'the same requests: 0.6 of the CPU is theirs');
      assert.equal(window({ cpu: 0.99, loop: 0.99 }, 140), false, '0.84 of the CPU and 0.7 of the loop');
      assert.equal(window({ cpu: 0.99, loop: 0.6 }, 160), true, 'the requests alone now need 0.96 of the CPU');
      assert.equal(window({ cpu: 0.95, loop: 0.5 }, 160), true, 'closed: measured again, 0.95 is past 0.8');
      assert.equal(window({ cpu: 0.7, loop: 0.5 }, 100), false);
      assert.equal(reliefs(), 2);
    });

    it("judge the loop the same way: the requests' share of it past 90% closes the gate", () => {
      const { window } = measured({ cpu: 0.3, loop: 0.5 });
      assert.equal(window({ cpu: 0.5, loop: 0.99 }, 170), false, 'the raw loop is full, the requests need 0.85 of it');
      assert.equal(window({ cpu: 0.5, loop: 0.99 }, 190), true, 'the requests need 0.95 of it');
    });

    it('a drain after the load, one request a window: deliveries keep the whole room', () => {
      const { window, reliefs } = measured();
      for (let i = 0; i < 10; i++) assert.equal(window({ cpu: 0.99, loop: 0.99 }, 1), false, `window ${i + 1}`);
      assert.equal(reliefs(), 1);
    });

    it('a cost more than ten windows old is measured again, the gate closed for one window', () => {
      const { window, reliefs } = measured();
      for (let i = 0; i < 10; i++) assert.equal(window({ cpu: 0.99, loop: 0.99 }, 100), false, `window ${i + 1}`);
      assert.equal(window({ cpu: 0.99, loop: 0.99 }, 100), true, 'the eleventh: closed, to measure again');
      assert.equal(window({ cpu: 0.62, loop: 0.5 }, 100), false, 'the requests alone: open again at once');
      assert.equal(reliefs(), 2);
      for (let i = 0; i < 10; i++) assert.equal(window({ cpu: 0.99, loop: 0.99 }, 100), false, `window ${i + 1} after the new measure`);
      assert.equal(window({ cpu: 0.7, loop: 0.5 }, 100), false, 'below 90% as measured: no new measure needed');
    });

    it("a window below 90% as measured never closes the gate, however stale the requests' cost", () => {
      const { window } = measured();
      for (let i = 0; i < 30; i++) assert.equal(window({ cpu: 0.85, loop: 0.7 }, 300), false, `window ${i + 1}`);
    });

    it('where the database is a server of its own, the writes gathering behind its commits are judged the same way', () => {
      const { window } = measured({ cpu: 0.4, loop: 0.3, writesPerBatch: 4 });
      assert.equal(
        window({ cpu: 0.5, loop: 0.5, writesPerBatch: 30 }, 100),
        false,
        "the deliveries' statements slow the commits: the requests' own writes gather 4 a batch",
      );
      assert.equal(window({ cpu: 0.5, loop: 0.5, writesPerBatch: 30 }, 320), true, 'the requests alone would gather 12.8 a batch');
    });
  });
});

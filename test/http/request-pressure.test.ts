import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, describe, it } from 'node:test';
import { RequestPressure, type Load } from '../../src/http/request-pressure.js';

function gauge(): { pressure: RequestPressure; load: Load; requests: (n: number) => void; reliefs: () => number } {
  const server = createServer();
  const load: Load = { loop: 0, writesPerBatch: 0 };
  const pressure = new RequestPressure(server, { batches: 0, items: 0 }, () => load);
  pressure.start();
  after(() => pressure.stop());
  let reliefs = 0;
  pressure.onRelief(() => reliefs++);
  return {
    pressure,
    load,
    requests: (n) => {
      for (let i = 0; i < n; i++) server.emit('request');
    },
    reliefs: () => reliefs,
  };
}

describe('request pressure', () => {
  it('high while requests are served with the event loop nearly full, with hysteresis; relief is announced', () => {
    const { pressure, load, requests, reliefs } = gauge();
    load.loop = 0.99;
    pressure.sample();
    assert.equal(pressure.high, false, 'no requests: background work is not in the way of any');
    requests(10);
    pressure.sample();
    assert.equal(pressure.high, true);
    load.loop = 0.8;
    requests(10);
    pressure.sample();
    assert.equal(pressure.high, true, 'between the thresholds: unchanged');
    load.loop = 0.5;
    requests(10);
    pressure.sample();
    assert.equal(pressure.high, false);
    assert.equal(reliefs(), 1);
    load.loop = 0.95;
    requests(1);
    pressure.sample();
    assert.equal(pressure.high, true);
    pressure.sample();
    assert.equal(pressure.high, false, 'requests stopped: relief at once');
    assert.equal(reliefs(), 2);
  });

  it('high while writes queue up for the database, whatever the event loop; relief once both are low', () => {
    const { pressure, load, requests, reliefs } = gauge();
    load.loop = 0.3;
    load.writesPerBatch = 3;
    requests(10);
    pressure.sample();
    assert.equal(pressure.high, false, 'a few writes a batch: the database keeps up');
    load.writesPerBatch = 30;
    requests(10);
    pressure.sample();
    assert.equal(pressure.high, true, 'writes gather behind each commit: at capacity');
    load.writesPerBatch = 8;
    requests(10);
    pressure.sample();
    assert.equal(pressure.high, true, 'between the thresholds: unchanged');
    load.writesPerBatch = 2;
    load.loop = 0.8;
    requests(10);
    pressure.sample();
    assert.equal(pressure.high, true, 'the queue is gone but the event loop is still between its thresholds');
    load.loop = 0.2;
    requests(10);
    pressure.sample();
    assert.equal(pressure.high, false);
    assert.equal(reliefs(), 1);
  });
});

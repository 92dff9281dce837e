import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, test } from 'node:test';
import { RequestPressure } from '../../src/http/request-pressure.js';

test('request pressure: high while requests are served with the CPU nearly full, with hysteresis; relief is announced', () => {
  const server = createServer();
  let load = 0;
  const pressure = new RequestPressure(server, () => load);
  pressure.start();
  after(() => pressure.stop());
  let reliefs = 0;
  pressure.onRelief(() => reliefs++);
  const requests = (n: number) => {
    for (let i = 0; i < n; i++) server.emit('request');
  };

  load = 0.99;
  pressure.sample();
  assert.equal(pressure.high, false, 'no requests: background work is not in the way of any');
  requests(10);
  pressure.sample();
  assert.equal(pressure.high, true);
  load = 0.8;
  requests(10);
  pressure.sample();
  assert.equal(pressure.high, true, 'between the thresholds: unchanged');
  load = 0.5;
  requests(10);
  pressure.sample();
  assert.equal(pressure.high, false);
  assert.equal(reliefs, 1);
  load = 0.95;
  requests(1);
  pressure.sample();
  assert.equal(pressure.high, true);
  pressure.sample();
  assert.equal(pressure.high, false, 'requests stopped: relief at once');
  assert.equal(reliefs, 2);
});

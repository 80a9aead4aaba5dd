import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Metrics } from './metrics.js';

const sources = {
  poolStats: () => ({ total: 1, idle: 1, waiting: 0 }),
  commitStats: () => ({ batches: 0, units: 0 }),
  pendingEvents: async () => 0,
};

test('request counts and latency buckets in the Prometheus text format: cumulative, +Inf equals count, sum exact', async () => {
  const metrics = new Metrics(sources);
  for (const seconds of [0.0005, 0.001, 0.003, 0.02, 3]) metrics.recordRequest('GET', '/v1/orders/:id', 200, seconds);
  metrics.recordRequest('GET', '/v1/orders/:id', 404, 0.002);
  metrics.recordRequest('POST', '/v1/orders', 201, 0.04);
  const text = await metrics.registry.metrics();
  const line = (name: string) => {
    const found = text.split('\n').find((l) => l.startsWith(`${name} `));
    assert.ok(found !== undefined, `${name} is exported`);
    return Number(found.slice(name.length + 1));
  };
  assert.equal(line('cauri_http_requests_total{method="GET",route="/v1/orders/:id",status="200"}'), 5);
  assert.equal(line('cauri_http_requests_total{method="GET",route="/v1/orders/:id",status="404"}'), 1);
  assert.equal(line('cauri_http_requests_total{method="POST",route="/v1/orders",status="201"}'), 1);
  const bucket = (le: string) => line(`cauri_http_request_duration_seconds_bucket{le="${le}",method="GET",route="/v1/orders/:id"}`);
  // Bounds are inclusive (le): 0.001 falls in the 0.001 bucket.
  assert.deepEqual(['0.001', '0.0025', '0.005', '0.01', '0.025', '2.5', '+Inf'].map(bucket), [2, 3, 4, 4, 5, 5, 6]);
  assert.equal(line('cauri_http_request_duration_seconds_count{method="GET",route="/v1/orders/:id"}'), 6);
  assert.ok(Math.abs(line('cauri_http_request_duration_seconds_sum{method="GET",route="/v1/orders/:id"}') - 3.0265) < 1e-9);
  assert.equal(line('cauri_http_request_duration_seconds_count{method="POST",route="/v1/orders"}'), 1);
  // A second scrape reports the same totals: reading does not reset or double them.
  const again = await metrics.registry.metrics();
  for (const series of [
    'cauri_http_requests_total{method="GET",route="/v1/orders/:id",status="200"} 5',
    'cauri_http_request_duration_seconds_count{method="GET",route="/v1/orders/:id"} 6',
  ]) {
    assert.ok(again.split('\n').includes(series), series);
  }
});

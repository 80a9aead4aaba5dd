import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pageLinks } from './link.js';

test('pageLinks: absolute, query kept, cursor replaced, nothing for empty cursors', () => {
  assert.equal(
    pageLinks('https://api.example.com', '/v1/orders?status=filled&cursor=old&limit=2', 'n1', ''),
    '<https://api.example.com/v1/orders?status=filled&cursor=n1&limit=2>; rel="next"',
  );
  assert.equal(
    pageLinks('https://api.example.com/base', '/v1/events', 'n.1', 'p-2'),
    '<https://api.example.com/base/v1/events?cursor=n.1>; rel="next", <https://api.example.com/base/v1/events?cursor=p-2>; rel="prev"',
  );
  assert.equal(pageLinks('https://api.example.com', '/v1/events', '', ''), null);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { EndpointSecrets } from './secrets.js';

test('a sealed secret opens for its endpoint only, also once it has been opened before', () => {
  const secrets = new EndpointSecrets(randomBytes(32));
  const sealed = secrets.seal('we_a', 'whsec_alpha');
  assert.equal(secrets.open('we_a', sealed), 'whsec_alpha');
  assert.equal(secrets.open('we_a', sealed), 'whsec_alpha', 'the second time, from memory');
  assert.throws(() => secrets.open('we_b', sealed), 'copied onto another endpoint, it does not open');
  const rotated = secrets.seal('we_a', 'whsec_beta');
  assert.notEqual(rotated, sealed, 'each seal is new');
  assert.equal(secrets.open('we_a', rotated), 'whsec_beta');
  assert.throws(() => new EndpointSecrets(randomBytes(32)).open('we_a', sealed), 'another key does not open it');
});

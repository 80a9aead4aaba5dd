import type { TestContext } from 'node:test';
import type { Runtime } from '../../src/app.js';
import { resolveMasterKey } from '../../src/config/master-key.js';
import { CursorCodec } from '../../src/http/cursor.js';
import type { Clock } from '../../src/lib/clock.js';
import { createWebhooks, type WebhookOptions } from '../../src/webhooks/index.js';
import { createDeliveryWorker, type DeliveryWorker } from '../../src/workers/delivery-worker.js';

/**
 * The delivery worker of a runtime a test started without workers (`CAURI_WORKERS=none`), for the
 * test to drive: the service's own webhook wiring on the test's clock, stopped when the test ends.
 */
export function startDeliveryWorker(t: TestContext, runtime: Runtime, clock: Clock, options?: Partial<WebhookOptions>): DeliveryWorker {
  const webhooks = createWebhooks({
    config: runtime.config,
    storage: runtime.storage,
    clock,
    masterKey: resolveMasterKey(runtime.config),
    idempotency: runtime.services.idempotency,
    cursors: new CursorCodec(Buffer.alloc(32)),
    log: runtime.app.log,
    ...(options === undefined ? {} : { options }),
  });
  const worker = createDeliveryWorker(webhooks);
  t.after(() => worker.stop());
  return worker;
}

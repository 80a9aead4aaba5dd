import { createPublicKey, verify } from 'node:crypto';
import { canonicalizeBytes, verifyAttestation } from '@cauri/verifier';
import { ScenarioError } from './load.js';

/** Operations per second of one side of an in-process comparison. */
export interface LoopMeasurement {
  /** Operations per second over all of this side's slices. */
  rps: number;
  /** Microseconds per operation at that rate. */
  microsPerOp: number;
  /** Operations per second of each quarter of the run, in order (shows the machine's drift). */
  quarters: number[];
}

/** Calls `op` for about `ms` milliseconds (reading the clock every 16 calls); returns [calls, elapsed ms]. */
function slice(op: () => boolean, ms: number): [number, number] {
  let count = 0;
  const start = performance.now();
  const end = start + ms;
  let now = start;
  while (now < end) {
    for (let i = 0; i < 16; i++) {
      if (!op()) throw new ScenarioError('offline verification returned false');
    }
    count += 16;
    now = performance.now();
  }
  return [count, now - start];
}

/**
 * `verifyAttestation(attestation, keyDocument)` against the floor it is built on: a raw
 * `crypto.verify(null, canonicalBytes, publicKeyObject, signature)` with the key already imported
 * and the canonical bytes already computed. After a warm-up of each, the two alternate in slices
 * of `sliceMs` for `totalMs` (half each), so that the drift of a shared machine hits both alike;
 * each side's rate is its operations over its own time.
 */
export function measureOfflineVerification(
  attestation: Record<string, unknown>,
  keyDocument: { keys: { key_id: string; public_key: string }[] },
  settings: { totalMs: number; sliceMs: number; warmupMs: number },
): { ours: LoopMeasurement; reference: LoopMeasurement } {
  const first = verifyAttestation(attestation, keyDocument);
  if (!first.valid) throw new ScenarioError(`the attestation does not verify: ${first.reason}: ${first.message}`);

  const keyId = attestation['key_id'];
  const key = keyDocument.keys.find((k) => k.key_id === keyId);
  if (key === undefined) throw new ScenarioError(`no key ${String(keyId)} in the key document`);
  const publicKey = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: key.public_key }, format: 'jwk' });
  const { signature, ...unsigned } = attestation;
  const signatureBytes = Buffer.from(String(signature), 'base64url');
  const canonical = canonicalizeBytes(unsigned);
  if (!verify(null, canonical, publicKey, signatureBytes)) throw new ScenarioError('raw Ed25519 verification of the attestation failed');

  const ours = () => verifyAttestation(attestation, keyDocument).valid;
  const raw = () => verify(null, canonical, publicKey, signatureBytes);

  slice(ours, settings.warmupMs);
  slice(raw, settings.warmupMs);
  const pairs = Math.max(4, Math.round(settings.totalMs / (2 * settings.sliceMs)));
  const oursSlices: [number, number][] = [];
  const rawSlices: [number, number][] = [];
  for (let i = 0; i < pairs; i++) {
    // Alternate which side goes first, so neither always runs right after the other.
    if (i % 2 === 0) {
      oursSlices.push(slice(ours, settings.sliceMs));
      rawSlices.push(slice(raw, settings.sliceMs));
    } else {
      rawSlices.push(slice(raw, settings.sliceMs));
      oursSlices.push(slice(ours, settings.sliceMs));
    }
  }
  const summary = (slices: [number, number][]): LoopMeasurement => {
    const rate = (part: [number, number][]) => (part.reduce((a, [c]) => a + c, 0) * 1000) / part.reduce((a, [, t]) => a + t, 0);
    const rps = rate(slices);
    const q = Math.ceil(slices.length / 4);
    const quarters = [0, 1, 2, 3]
      .map((i) => slices.slice(i * q, (i + 1) * q))
      .filter((part) => part.length > 0)
      .map(rate);
    return { rps, microsPerOp: 1e6 / rps, quarters };
  };
  return { ours: summary(oursSlices), reference: summary(rawSlices) };
}

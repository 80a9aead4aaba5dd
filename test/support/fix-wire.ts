/**
 * FIX 4.4 on the wire, for tests that stand between the service and a gateway (fix-proxy.ts) or play
 * the gateway themselves (fix-gateway.ts): framing by BodyLength (9) and CheckSum (10), encoding with
 * both computed, and the timestamps of the header. Nothing here validates more than framing.
 */

const SOH = '\x01';

export interface FixFrame {
  /** The message as received, SOH included. */
  readonly raw: Buffer;
  /** The message with `|` for SOH, for assertions and diagnostics. */
  readonly text: string;
  readonly fields: Map<number, string>;
}

export function frameOf(raw: Buffer): FixFrame {
  const text = raw.toString('latin1');
  const fields = new Map<number, string>();
  for (const part of text.split(SOH)) {
    const eq = part.indexOf('=');
    // The first occurrence of a tag wins (repeating groups are not read here).
    if (eq > 0 && !fields.has(Number(part.slice(0, eq)))) fields.set(Number(part.slice(0, eq)), part.slice(eq + 1));
  }
  return { raw, text: text.replaceAll(SOH, '|'), fields };
}

/**
 * Splits a byte stream into FIX messages: `8=...` then `9=<length>`, that many bytes, then
 * `10=nnn<SOH>`. Bytes that do not start a message are skipped up to the next `8=FIX`.
 */
export class FixFramer {
  #pending = Buffer.alloc(0);

  push(chunk: Buffer): FixFrame[] {
    this.#pending = Buffer.concat([this.#pending, chunk]);
    const frames: FixFrame[] = [];
    for (;;) {
      const start = this.#pending.indexOf('8=FIX');
      if (start < 0) {
        this.#pending = this.#pending.subarray(Math.max(0, this.#pending.length - 4));
        return frames;
      }
      if (start > 0) this.#pending = this.#pending.subarray(start);
      const lengthAt = this.#pending.indexOf(`${SOH}9=`);
      if (lengthAt < 0) return frames;
      const lengthEnd = this.#pending.indexOf(SOH, lengthAt + 1);
      if (lengthEnd < 0) return frames;
      const bodyLength = Number(this.#pending.subarray(lengthAt + 3, lengthEnd).toString('latin1'));
      if (!Number.isSafeInteger(bodyLength) || bodyLength < 0) {
        // Not a message: look for the next one.
        this.#pending = this.#pending.subarray(1);
        continue;
      }
      const trailerAt = lengthEnd + 1 + bodyLength;
      const end = this.#pending.indexOf(SOH, trailerAt);
      if (end < 0) return frames;
      frames.push(frameOf(Buffer.from(this.#pending.subarray(0, end + 1))));
      this.#pending = this.#pending.subarray(end + 1);
    }
  }
}

/** UTCTimestamp with milliseconds: `20261124-18:15:16.085`. */
export function fixTime(at: Date = new Date()): string {
  const iso = at.toISOString();
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}-${iso.slice(11, 23)}`;
}

export function checksumOf(bytes: Buffer): string {
  let sum = 0;
  for (const byte of bytes) sum += byte;
  return String(sum % 256).padStart(3, '0');
}

/**
 * A FIX 4.4 message from its fields after BodyLength (MsgType first), with BodyLength and CheckSum
 * computed; `checksum` overrides the computed one (a garbled message).
 */
export function encodeFix(fields: readonly (readonly [number, string | number])[], options: { checksum?: string } = {}): Buffer {
  const body = fields.map(([tag, value]) => `${tag}=${value}${SOH}`).join('');
  const head = `8=FIX.4.4${SOH}9=${Buffer.byteLength(body, 'latin1')}${SOH}`;
  const withoutTrailer = Buffer.from(`${head}${body}`, 'latin1');
  return Buffer.concat([withoutTrailer, Buffer.from(`10=${options.checksum ?? checksumOf(withoutTrailer)}${SOH}`, 'latin1')]);
}

import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  createSecretKey,
  hash,
  hkdfSync,
  randomBytes,
  sign,
  type KeyObject,
} from 'node:crypto';

/** A 32-byte key for one purpose, derived from the master key (HKDF-SHA-256, RFC 5869). */
export function deriveKey(master: Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), `cauri/${purpose}`, 32));
}

/**
 * AES-256-GCM sealing of a secret at rest: `v1.<iv>.<ciphertext+tag>` in base64url. `context` is
 * bound as additional data, so a sealed value copied to another row (another key id) fails to open.
 */
export function seal(key: Buffer, plaintext: Buffer, context: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(context));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
  return `v1.${iv.toString('base64url')}.${body.toString('base64url')}`;
}

export function open(key: Buffer, sealed: string, context: string): Buffer {
  const [version, iv, body] = sealed.split('.');
  if (version !== 'v1' || iv === undefined || body === undefined) throw new Error('unsupported sealed value');
  const bytes = Buffer.from(body, 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAAD(Buffer.from(context));
  decipher.setAuthTag(bytes.subarray(bytes.length - 16));
  return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]);
}

interface PendingSignature {
  data: Buffer;
  key: KeyObject;
  resolve: (signature: Buffer) => void;
  reject: (error: unknown) => void;
}

let pendingSignatures: PendingSignature[] = [];

/** Hands the signatures asked for during this turn of the event loop to the pool, back to back. */
function flushSignatures(): void {
  const batch = pendingSignatures;
  pendingSignatures = [];
  for (const p of batch) {
    try {
      sign(null, p.data, p.key, (error, signature) => (error === null ? p.resolve(signature) : p.reject(error)));
    } catch (error) {
      p.reject(error);
    }
  }
}

/**
 * An Ed25519 signature made on libuv's thread pool rather than on the event loop. Made inline, a
 * signature stops every other request for as long as it takes, while on the pool it runs beside them
 * on another core.
 *
 * The signatures asked for during one turn of the loop are handed over together once the turn's I/O
 * has been handled (setImmediate). A job handed to an idle pool wakes a sleeping thread, which costs
 * the event loop several times what a job queued behind others costs; handed over back to back, only
 * the first jobs of a turn wake a thread. The figures are in docs/performance.md ("Figures behind the
 * code").
 */
export function signEd25519(data: Buffer, key: KeyObject): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    if (pendingSignatures.length === 0) setImmediate(flushSignatures);
    pendingSignatures.push({ data, key, resolve, reject });
  });
}

const SHA256_BLOCK = 64;

/**
 * HMAC-SHA-256 (RFC 2104) under one fixed key, for the short messages checked on every request
 * (client secrets): the two hashes of the definition, H((K ^ opad) || H((K ^ ipad) || m)), each made
 * by node:crypto's one-shot `hash` into buffers prepared once. `createHmac` builds a stream object
 * and looks the digest up anew on every call. Longer messages take `createHmac`.
 */
export class HmacSha256 {
  readonly #key: KeyObject;
  /** The ipad-masked key, then room for the message. */
  readonly #inner: Buffer;
  /** The opad-masked key, then the inner digest. */
  readonly #outer = Buffer.alloc(SHA256_BLOCK + 32);

  constructor(
    key: Buffer,
    /** Longest message, in UTF-8 bytes, hashed without createHmac. */
    readonly maxMessageBytes = 256,
  ) {
    this.#key = createSecretKey(key);
    const k = key.length > SHA256_BLOCK ? createHash('sha256').update(key).digest() : key;
    this.#inner = Buffer.alloc(SHA256_BLOCK + maxMessageBytes);
    for (let i = 0; i < SHA256_BLOCK; i++) {
      const byte = k[i] ?? 0;
      this.#inner[i] = byte ^ 0x36;
      this.#outer[i] = byte ^ 0x5c;
    }
  }

  digest(message: string, encoding: 'base64url' | 'hex'): string {
    if (message.length > this.maxMessageBytes || Buffer.byteLength(message) > this.maxMessageBytes) {
      return createHmac('sha256', this.#key).update(message).digest(encoding);
    }
    const n = this.#inner.write(message, SHA256_BLOCK, 'utf8');
    this.#outer.set(hash('sha256', this.#inner.subarray(0, SHA256_BLOCK + n), 'buffer'), SHA256_BLOCK);
    return hash('sha256', this.#outer, encoding);
  }
}

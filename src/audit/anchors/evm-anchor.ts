import {
  BaseError,
  ExecutionRevertedError,
  InsufficientFundsError,
  NonceTooLowError,
  createPublicClient,
  hexToBigInt,
  http,
  isAddress,
  keccak256,
  type Address,
  type Hex,
  type PublicClient,
} from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { systemClock, type Clock } from '../../lib/clock.js';
import { AnchorError, assertAnchorInput } from './anchor.js';
import type { Anchor, AnchorInput, AnchorReceipt } from './anchor.js';
import { anchorCalldata } from './evm-calldata.js';

export interface EvmAnchorOptions {
  /** Name stored in `anchors[].chain`, e.g. "ethereum-sepolia": lowercase letters, digits and hyphens. */
  readonly chain: string;
  /** The node's JSON-RPC endpoint, http or https. */
  readonly rpcUrl: string;
  /** The sending account's secp256k1 key, 32 bytes as 64 hex characters (0x prefix optional). */
  readonly privateKey: string;
  /** Blocks, counting the one that includes the transaction, before `confirm` returns a receipt (>= 1). */
  readonly confirmations: number;
  /** The EIP-155 chain id the node must serve. Unset: whatever the node reports (fine for a local node, risky elsewhere). */
  readonly chainId?: number;
  /** Recipient of the anchor transactions. Default: the sending account itself. Must be an account without code. */
  readonly to?: string;
  /** Time-out of one RPC request. Default 10 s. */
  readonly timeoutMs?: number;
  /**
   * How long after sending a transaction this instance still reads "the node does not know it" as
   * pending rather than dropped: a load-balanced RPC endpoint may route `confirm` to a node that has
   * not seen the transaction yet. Default 5 minutes.
   */
  readonly dropGraceMs?: number;
  readonly clock?: Clock;
}

/** A non-canonical transaction hash is a caller bug, not a chain condition. */
const TX_HASH = /^0x[0-9a-fA-F]{64}$/;
const CHAIN_NAME = /^[a-z][a-z0-9-]{0,63}$/;

/**
 * Anchors on an EVM chain through the standard Ethereum JSON-RPC interface. Each anchor is one
 * transaction from the configured account, value 0, whose data is `anchorCalldata(date, root)`
 * (layout in evm-calldata.ts). It is signed here with the configured key and handed over with
 * `eth_sendRawTransaction`, so any node or RPC provider works; none holds the key.
 *
 * Fees are EIP-1559 when the latest block has a base fee (tip from `eth_maxPriorityFeePerGas`,
 * falling back to `eth_gasPrice` minus the base fee; fee cap 2 x base fee + tip, which survives six
 * full blocks of base-fee rises, while the chain charges only the base fee actually due), and
 * legacy `eth_gasPrice` otherwise. The gas limit is `eth_estimateGas`'s answer, exact for a
 * recipient without code.
 *
 * Nonces: submissions of one instance run one at a time. The nonce is the larger of the node's
 * pending count and the one after this instance's last transaction, so two anchors in a row get
 * consecutive nonces even when the node is slow to count the first. After any failure, and after
 * a transaction is found dropped, the local guess is forgotten and the node's count is used again,
 * so a gap left by a lost transaction is refilled. One account must not be shared by two
 * instances or processes.
 *
 * Idempotency: a second `submit` of the same (date, root) in this instance returns the first hash
 * until that transaction is found dropped or reverted. A chain cannot deduplicate plain
 * transactions, so after a restart the same root may be anchored twice; both are valid anchors.
 *
 * Known limit: a transaction priced too low for a fee spike stays pending (and holds back the
 * following nonces) until fees fall; it is not replaced with a higher fee.
 */
export class EvmAnchor implements Anchor {
  readonly chain: string;
  /** The sending account, for operators (fund it; watch it on an explorer). */
  readonly address: Address;
  readonly #account: PrivateKeyAccount;
  readonly #client: PublicClient;
  readonly #rpcOrigin: string;
  readonly #to: Address;
  readonly #confirmations: number;
  readonly #expectedChainId: number | undefined;
  readonly #dropGraceMs: number;
  readonly #clock: Clock;
  #chainId: number | undefined;
  /** The nonce after this instance's last sent transaction, while it is trusted. */
  #nextNonce: number | undefined;
  #queue: Promise<unknown> = Promise.resolve();
  /** `${date}:${root}` -> hash of the transaction that anchors it. */
  readonly #byInput = new Map<string, Hex>();
  /** Hash -> when this instance sent it (clock ms), for the drop grace. */
  readonly #sentAt = new Map<Hex, number>();

  /** Throws AnchorError `misconfigured` for a malformed option; the key never appears in a message. */
  constructor(options: EvmAnchorOptions) {
    const misconfigured = (message: string) => new AnchorError('misconfigured', options.chain, message);
    if (typeof options.chain !== 'string' || !CHAIN_NAME.test(options.chain)) {
      throw misconfigured('chain must be a lowercase name of letters, digits and hyphens, such as "ethereum-sepolia"');
    }
    this.chain = options.chain;

    let url: URL;
    try {
      url = new URL(options.rpcUrl);
    } catch {
      throw misconfigured('rpcUrl must be an absolute http or https URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw misconfigured('rpcUrl must be an http or https URL');
    // Providers put API keys in the path or query, so messages name only the origin, and errors
    // from the RPC library (which quote the full URL) are not attached as causes.
    this.#rpcOrigin = url.origin;

    const key = typeof options.privateKey === 'string' ? options.privateKey.trim() : '';
    const hexKey = (key.startsWith('0x') ? key : `0x${key}`) as Hex;
    if (!/^0x[0-9a-fA-F]{64}$/.test(hexKey)) throw misconfigured('privateKey must be 32 bytes as 64 hex characters');
    try {
      this.#account = privateKeyToAccount(hexKey);
    } catch {
      // Zero, or not below the curve order: 64 hex characters that are not a secp256k1 key.
      throw misconfigured('privateKey is not a valid secp256k1 private key');
    }
    this.address = this.#account.address;

    if (options.to !== undefined && !isAddress(options.to, { strict: false })) throw misconfigured('to must be a 20-byte hex address');
    this.#to = (options.to as Address | undefined) ?? this.address;

    if (!Number.isSafeInteger(options.confirmations) || options.confirmations < 1)
      throw misconfigured('confirmations must be a whole number >= 1');
    this.#confirmations = options.confirmations;
    if (options.chainId !== undefined && (!Number.isSafeInteger(options.chainId) || options.chainId < 1)) {
      throw misconfigured('chainId must be a positive whole number');
    }
    this.#expectedChainId = options.chainId;
    this.#dropGraceMs = options.dropGraceMs ?? 5 * 60_000;
    this.#clock = options.clock ?? systemClock;
    // Two retries with back-off inside viem: harmless for reads, and for eth_sendRawTransaction a
    // retried request carries the same signed bytes, which the node answers with "already known".
    this.#client = createPublicClient({ transport: http(url.href, { timeout: options.timeoutMs ?? 10_000, retryCount: 2 }) });
  }

  submit(input: AnchorInput): Promise<{ tx_hash: string }> {
    assertAnchorInput(input);
    const run = this.#queue.then(() => this.#submit(input));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #submit(input: AnchorInput): Promise<{ tx_hash: string }> {
    const key = `${input.date}:${input.merkleRoot}`;
    const known = this.#byInput.get(key);
    if (known !== undefined) return { tx_hash: known };
    const data = anchorCalldata(input.date, input.merkleRoot);
    try {
      const chainId = await this.#getChainId();
      const gas = await this.#client.estimateGas({ account: this.address, to: this.#to, data, value: 0n });
      const fees = await this.#fees();
      // A second attempt only after the node said "nonce too low": another sender used this
      // account, or the local guess outlived a mined transaction. The node's count then decides.
      for (let attempt = 1; ; attempt++) {
        const pending = await this.#client.getTransactionCount({ address: this.address, blockTag: 'pending' });
        const nonce = Math.max(pending, this.#nextNonce ?? 0);
        const common = { chainId, nonce, to: this.#to, data, value: 0n, gas } as const;
        const signed =
          fees.type === 'eip1559'
            ? await this.#account.signTransaction({
                ...common,
                type: 'eip1559',
                maxFeePerGas: fees.maxFeePerGas,
                maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
              })
            : await this.#account.signTransaction({ ...common, type: 'legacy', gasPrice: fees.gasPrice });
        const hash = keccak256(signed);
        try {
          await this.#client.sendRawTransaction({ serializedTransaction: signed });
        } catch (err) {
          if (!matches(err, NONCE_CONFLICT)) throw err;
          // "already known" for these very bytes (a retried request that had reached the node) is
          // success; otherwise the nonce was taken.
          if (!(await this.#knows(hash))) {
            this.#nextNonce = undefined;
            if (attempt < 2) continue;
            throw err;
          }
        }
        this.#nextNonce = nonce + 1;
        this.#byInput.set(key, hash);
        this.#sentAt.set(hash, this.#clock.now().getTime());
        return { tx_hash: hash };
      }
    } catch (err) {
      this.#nextNonce = undefined;
      throw this.#anchorError(err);
    }
  }

  async confirm(txHash: string): Promise<AnchorReceipt | null> {
    if (typeof txHash !== 'string' || !TX_HASH.test(txHash)) throw new TypeError('txHash must be 0x and 64 hex characters');
    const hash = txHash.toLowerCase() as Hex;
    try {
      const receipt = await this.#client.request({ method: 'eth_getTransactionReceipt', params: [hash] });
      if (receipt === null) {
        if (await this.#knows(hash)) return null;
        const sentAt = this.#sentAt.get(hash);
        if (sentAt !== undefined && this.#clock.now().getTime() - sentAt < this.#dropGraceMs) return null;
        this.#forget(hash);
        this.#nextNonce = undefined;
        throw new AnchorError('dropped', this.chain, `transaction ${hash} is unknown to the node at ${this.#rpcOrigin}; submit again`, {
          txHash: hash,
        });
      }
      if (receipt.status !== '0x1') {
        this.#forget(hash);
        throw new AnchorError('reverted', this.chain, `transaction ${hash} failed in block ${hexToBigInt(receipt.blockNumber)}`, {
          txHash: hash,
        });
      }
      const head = hexToBigInt(await this.#client.request({ method: 'eth_blockNumber' }));
      const height = hexToBigInt(receipt.blockNumber);
      // After a reorganisation the receipt may name a new block; it is read afresh on every call.
      if (head - height + 1n < BigInt(this.#confirmations)) return null;
      return { chain: this.chain, tx_hash: hash, block_height: Number(height) };
    } catch (err) {
      throw this.#anchorError(err, hash);
    }
  }

  async #getChainId(): Promise<number> {
    if (this.#chainId !== undefined) return this.#chainId;
    const id = await this.#client.getChainId();
    if (this.#expectedChainId !== undefined && id !== this.#expectedChainId) {
      throw new AnchorError(
        'misconfigured',
        this.chain,
        `the node at ${this.#rpcOrigin} serves chain id ${id}, not ${this.#expectedChainId}`,
      );
    }
    this.#chainId = id;
    return id;
  }

  async #fees(): Promise<{ type: 'eip1559'; maxFeePerGas: bigint; maxPriorityFeePerGas: bigint } | { type: 'legacy'; gasPrice: bigint }> {
    const block = await this.#client.getBlock({ blockTag: 'latest' });
    if (block.baseFeePerGas === null || block.baseFeePerGas === undefined)
      return { type: 'legacy', gasPrice: await this.#client.getGasPrice() };
    const tip = await this.#client.estimateMaxPriorityFeePerGas();
    return { type: 'eip1559', maxFeePerGas: 2n * block.baseFeePerGas + tip, maxPriorityFeePerGas: tip };
  }

  async #knows(hash: Hex): Promise<boolean> {
    return (await this.#client.request({ method: 'eth_getTransactionByHash', params: [hash] })) !== null;
  }

  /** After dropped or reverted, a new submit of the same (date, root) must publish again. */
  #forget(hash: Hex): void {
    this.#sentAt.delete(hash);
    for (const [key, value] of this.#byInput) if (value === hash) this.#byInput.delete(key);
  }

  #anchorError(err: unknown, txHash?: string): unknown {
    if (err instanceof AnchorError || !(err instanceof BaseError)) return err;
    const options = txHash === undefined ? {} : { txHash };
    const detail = describe(err);
    if (matches(err, INSUFFICIENT_FUNDS)) {
      return new AnchorError(
        'misconfigured',
        this.chain,
        `account ${this.address} cannot pay for gas on ${this.chain}; fund it (${detail})`,
        options,
      );
    }
    if (matches(err, REVERTED))
      return new AnchorError('reverted', this.chain, `the anchor transaction to ${this.#to} reverts (${detail})`, options);
    return new AnchorError('unavailable', this.chain, `the node at ${this.#rpcOrigin} failed: ${detail}`, options);
  }
}

// Node messages differ (geth, erigon, anvil, nethermind). viem classifies them in some actions and
// not in others (eth_sendRawTransaction), so both its classes and the messages are checked.
const NONCE_CONFLICT = { type: NonceTooLowError, pattern: /nonce too low|already known|already imported|known transaction/i };
const INSUFFICIENT_FUNDS = { type: InsufficientFundsError, pattern: /insufficient funds|insufficient balance/i };
const REVERTED = { type: ExecutionRevertedError, pattern: /execution reverted/i };

/** Whether any error in the chain of causes is of `kind`. */
function matches(err: unknown, kind: { type: abstract new (...args: never[]) => Error; pattern: RegExp }): boolean {
  const test = (e: unknown) =>
    e instanceof kind.type ||
    (e instanceof BaseError ? kind.pattern.test(`${e.shortMessage} ${e.details}`) : e instanceof Error && kind.pattern.test(e.message));
  return err instanceof BaseError ? err.walk(test) !== null : test(err);
}

/**
 * The short description, the detail and the innermost cause's system code (ECONNREFUSED) or
 * message, without the URL and request body viem appends to its full message.
 */
function describe(err: BaseError): string {
  const details = err.details && err.details !== err.shortMessage ? ` ${err.details}` : '';
  const innermost: unknown = err.walk();
  let cause = '';
  if (innermost !== err && innermost instanceof Error && !(innermost instanceof BaseError)) {
    cause = ` (${'code' in innermost && typeof innermost.code === 'string' ? innermost.code : innermost.message})`;
  }
  return `${err.shortMessage}${details}${cause}`.slice(0, 500);
}

import type { AnchorConfig } from '../config/config.js';
import type { Clock } from '../lib/clock.js';
import type { Anchor, AnchorInput, AnchorReceipt } from './anchors/anchor.js';
import type { EvmAnchorOptions } from './anchors/evm-anchor.js';
import { SandboxAnchor } from './anchors/sandbox-anchor.js';

/** The anchor `CAURI_ANCHOR` names (docs/configuration.md). */
export function anchorFromConfig(config: AnchorConfig, clock: Clock): Anchor {
  if (config.kind === 'sandbox') return new SandboxAnchor();
  return new DeferredEvmAnchor({
    chain: config.chainName,
    rpcUrl: config.rpcUrl,
    privateKey: config.privateKey,
    confirmations: config.confirmations,
    ...(config.chainId === null ? {} : { chainId: config.chainId }),
    ...(config.to === null ? {} : { to: config.to }),
    clock,
  });
}

/**
 * The EVM anchor, its Ethereum library loaded in the background from construction on rather than
 * with every process (the command line, the API processes) that never anchors. The configuration
 * checked every option but one before this: a key outside the curve's range is refused at the first
 * anchoring, as AnchorError `misconfigured`.
 */
class DeferredEvmAnchor implements Anchor {
  readonly chain: string;
  readonly #anchor: Promise<Anchor>;

  constructor(options: EvmAnchorOptions) {
    this.chain = options.chain;
    this.#anchor = import('./anchors/evm-anchor.js').then(({ EvmAnchor }) => new EvmAnchor(options));
    // Reported by the first call, not as an unhandled rejection.
    this.#anchor.catch(() => undefined);
  }

  async submit(input: AnchorInput): Promise<{ tx_hash: string }> {
    return (await this.#anchor).submit(input);
  }

  async confirm(txHash: string): Promise<AnchorReceipt | null> {
    return (await this.#anchor).confirm(txHash);
  }
}

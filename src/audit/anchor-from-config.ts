import type { AnchorConfig } from '../config/config.js';
import type { Clock } from '../lib/clock.js';
import type { Anchor } from './anchors/anchor.js';
import { EvmAnchor } from './anchors/evm-anchor.js';
import { SandboxAnchor } from './anchors/sandbox-anchor.js';

/** The anchor `CAURI_ANCHOR` names (docs/configuration.md). */
export function anchorFromConfig(config: AnchorConfig, clock: Clock): Anchor {
  if (config.kind === 'sandbox') return new SandboxAnchor();
  return new EvmAnchor({
    chain: config.chainName,
    rpcUrl: config.rpcUrl,
    privateKey: config.privateKey,
    confirmations: config.confirmations,
    ...(config.chainId === null ? {} : { chainId: config.chainId }),
    ...(config.to === null ? {} : { to: config.to }),
    clock,
  });
}

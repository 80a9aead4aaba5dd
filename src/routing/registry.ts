import type { PartnerConnector } from './connector.js';

/**
 * Builds the connector of one partner; `partnerId` names the instance (and its report log). With
 * `testClock`, the instance that serves the orders on that sandbox test clock, on the clock's time.
 */
export type ConnectorFactory = (partnerId: string, testClock?: string) => PartnerConnector;

/**
 * Which connectors this deployment can use, by the name a partner's `connector` column holds, with
 * one instance per partner. Sandbox deployments register `sandbox`; production registers the real
 * connectors of the SGIs it works with.
 */
export class ConnectorRegistry {
  readonly #instances = new Map<string, PartnerConnector>();

  constructor(private readonly factories: Readonly<Record<string, ConnectorFactory>>) {}

  has(connector: string): boolean {
    return Object.hasOwn(this.factories, connector);
  }

  /** The instance for a partner, created on first use; undefined when the connector is not available. */
  get(connector: string, partnerId: string): PartnerConnector | undefined {
    const key = `${connector}:${partnerId}`;
    const existing = this.#instances.get(key);
    if (existing !== undefined) return existing;
    // `<connector>@<clock id>`: the orders on a test clock have their own instance (see OrderTable.connector).
    const at = connector.indexOf('@');
    const factory = this.factories[at === -1 ? connector : connector.slice(0, at)];
    if (factory === undefined) return undefined;
    const created = at === -1 ? factory(partnerId) : factory(partnerId, connector.slice(at + 1));
    this.#instances.set(key, created);
    return created;
  }

  /** Every instance created so far, with the key its read position is stored under. */
  instances(): [string, PartnerConnector][] {
    return [...this.#instances.entries()];
  }
}

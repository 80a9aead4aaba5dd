import type { Clock } from '../../lib/clock.js';
import type { OrderId } from '../../lib/ids.js';
import type {
  AmendRequest,
  AmendResult,
  CancelRequest,
  CancelResult,
  OrderForPartner,
  PartnerConnector,
  ReportBatch,
  SubmitResult,
} from '../connector.js';
import { SgiSimulator } from './simulator.js';

/**
 * The PartnerConnector of sandbox partners: a simulated SGI (simulator.ts) driven by the injected
 * clock. Each call reads the clock once and lets the simulator catch up to that time, so the reports
 * a router sees depend only on the calls it makes and the times it makes them at.
 */
export class SandboxConnector implements PartnerConnector {
  readonly name: string;
  readonly simulator: SgiSimulator;
  readonly #clock: Clock;

  /**
   * `name` is the partner id (it prefixes report ids). The log epoch is the clock's time at
   * construction, so positions from before a restart read as unknown (delivery restarts from the
   * beginning of the new log) rather than pointing into it.
   */
  constructor(options: { name: string; clock: Clock; epoch?: string }) {
    this.name = options.name;
    this.#clock = options.clock;
    this.simulator = new SgiSimulator({ name: options.name, epoch: options.epoch ?? options.clock.now().getTime().toString(36) });
  }

  async submit(order: OrderForPartner): Promise<SubmitResult> {
    return this.simulator.submit(order, this.#nowMs());
  }

  async cancel(orderId: OrderId, request: CancelRequest): Promise<CancelResult> {
    return this.simulator.cancel(orderId, request, this.#nowMs());
  }

  async amend(orderId: OrderId, request: AmendRequest): Promise<AmendResult> {
    return this.simulator.amend(orderId, request, this.#nowMs());
  }

  async reports(since: string | null, options?: { limit?: number }): Promise<ReportBatch> {
    return this.simulator.reports(since, this.#nowMs(), options);
  }

  #nowMs(): number {
    return this.#clock.now().getTime();
  }
}

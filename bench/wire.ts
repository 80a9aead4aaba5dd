import { CountersProbe } from './load.js';

const KINDS = ['statements', 'round_trips', 'transactions'] as const;
type Kind = (typeof KINDS)[number];

/** The service's `cauri_db_wire_total` counters now. */
export async function readWire(service: string): Promise<Record<Kind, number>> {
  const response = await fetch(`${service}/metrics`);
  if (!response.ok) throw new Error(`${service}/metrics answered ${response.status}`);
  const text = await response.text();
  const counts = {} as Record<Kind, number>;
  for (const kind of KINDS) {
    const series = `cauri_db_wire_total{kind="${kind}"} `;
    const line = text.split('\n').find((l) => l.startsWith(series));
    if (line === undefined) throw new Error(`${service}/metrics has no cauri_db_wire_total{kind="${kind}"}`);
    counts[kind] = Number(line.slice(series.length));
  }
  return counts;
}

/**
 * What a service on PostgreSQL sent to its database during the measured runs of ours, from its own
 * counters: everything the process did meanwhile (the requests, the routing loop's fills, the
 * background loops), over the requests answered.
 */
export class WireProbe extends CountersProbe<Kind> {
  readonly #service: string;

  constructor(service: string) {
    super({ statements: 0, round_trips: 0, transactions: 0 });
    this.#service = service;
  }

  protected read(): Promise<Record<Kind, number>> {
    return readWire(this.#service);
  }

  note(answered: number): string {
    const per = (kind: Kind) => (answered > 0 ? (this.total[kind] / answered).toFixed(1) : '—');
    return (
      `Sent to PostgreSQL by the service during the measured runs, over the ${answered.toLocaleString('en-US')} orders answered (its \`cauri_db_wire_total\`, ` +
      `which counts all the process sent meanwhile: the requests, the fills its routing loop applied, its background loops; ` +
      `under this load the fills trail their orders, and those applied after a run, during the next side's, are not counted): ` +
      `${per('statements')} statements, ${per('round_trips')} round trips and ${per('transactions')} transactions an order.`
    );
  }
}

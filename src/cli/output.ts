/** Output helpers shared by the commands: JSON for scripts, aligned text for people. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function printTable(records: readonly object[], columns: string[]): void {
  const rows = records as readonly Record<string, unknown>[];
  const cells = rows.map((r) => columns.map((c) => (r[c] === undefined || r[c] === null ? '' : Array.isArray(r[c]) ? (r[c] as unknown[]).join(',') : String(r[c]))));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => (row[i] ?? '').length)));
  const line = (values: string[]) => values.map((v, i) => v.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
  process.stdout.write(`${line(columns)}\n`);
  for (const row of cells) process.stdout.write(`${line(row)}\n`);
}

/** A failure the user can fix: printed without a stack trace, exit code 1. */
export class CliError extends Error {
  constructor(message: string, readonly exitCode = 1) {
    super(message);
    this.name = 'CliError';
  }
}

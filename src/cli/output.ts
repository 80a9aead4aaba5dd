import { MESSAGES, type MessageKey } from './i18n/messages.js';

/** Output helpers shared by the commands: JSON for scripts, aligned text for people. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function printTable(records: readonly object[], columns: string[]): void {
  const rows = records as readonly Record<string, unknown>[];
  const cells = rows.map((r) =>
    columns.map((c) => (r[c] === undefined || r[c] === null ? '' : Array.isArray(r[c]) ? (r[c] as unknown[]).join(',') : String(r[c]))),
  );
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => (row[i] ?? '').length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  process.stdout.write(`${line(columns)}\n`);
  for (const row of cells) process.stdout.write(`${line(row)}\n`);
}

/** A message of the command line's catalogues (src/cli/i18n/messages.ts) and its values. */
export interface CliText {
  key: string;
  params?: Record<string, string | number>;
}

/**
 * A failure the user can fix: printed without a stack trace, exit code 1. Given a catalogue message,
 * it is printed in the user's language (its `message` is the English one).
 */
export class CliError extends Error {
  readonly text: CliText | undefined;

  constructor(
    message: string | CliText,
    readonly exitCode = 1,
  ) {
    super(typeof message === 'string' ? message : fill(MESSAGES.en[message.key as MessageKey] ?? message.key, message.params ?? {}));
    this.name = 'CliError';
    this.text = typeof message === 'string' ? undefined : message;
  }
}

/** `{name}` placeholders of a catalogue message, filled. */
export function fill(text: string, params: Record<string, string | number>, locale = 'en'): string {
  return text.replace(/\{(\w+)\}/g, (whole, name: string) => {
    const value = params[name];
    return value === undefined ? whole : typeof value === 'number' ? new Intl.NumberFormat(locale).format(value) : value;
  });
}

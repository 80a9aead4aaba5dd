import type { ErrorDetail } from '../lib/errors.js';
import type { Validator } from '../lib/validation.js';
import { unstorableTextDetail } from '../lib/unicode.js';

export interface ImportReport {
  applied: { index: number; id: string; action: 'created' | 'updated' }[];
  rejected: { index: number; details: ErrorDetail[] }[];
  /** False when rows were rejected and the import was all-or-nothing: nothing was written. */
  committed: boolean;
}

/** A row ready to write, or why it cannot be. */
export type PreparedRow<R> = { id: string; row: R; action: 'created' | 'updated' } | { details: ErrorDetail[] };

/**
 * The contract of every operator import: the input is a JSON array; every row is validated against
 * `validate` (after a check that its text can be stored as written) and prepared (checked against the database and earlier rows) before anything is written;
 * by default one bad row and nothing is written, with `allowPartial` the good rows are written. Run it
 * inside a transaction so that the writes commit together.
 */
export async function runImport<T, R>(
  input: unknown,
  what: string,
  options: { allowPartial?: boolean },
  validate: Validator,
  prepare: (row: T, index: number) => Promise<PreparedRow<R>>,
  write: (row: R) => Promise<void>,
): Promise<ImportReport> {
  const report: ImportReport = { applied: [], rejected: [], committed: false };
  if (!Array.isArray(input)) {
    report.rejected.push({
      index: -1,
      details: [{ field: 'file', rule: 'type', value: null, message: `must be a JSON array of ${what}` }],
    });
    return report;
  }
  const ready: { index: number; id: string; row: R; action: 'created' | 'updated' }[] = [];
  for (const [index, raw] of input.entries()) {
    // Text that cannot be stored as written (a lone surrogate, U+0000) is refused like any other
    // invalid member, before the database sees it.
    const text = unstorableTextDetail(raw, 'row');
    const problems = text === null ? validate(raw) : [text];
    const prepared = problems === null ? await prepare(raw as T, index) : { details: problems };
    if ('details' in prepared) report.rejected.push({ index, details: prepared.details });
    else ready.push({ index, ...prepared });
  }
  if (report.rejected.length > 0 && options.allowPartial !== true) return report;
  for (const item of ready) {
    await write(item.row);
    report.applied.push({ index: item.index, id: item.id, action: item.action });
  }
  report.committed = true;
  return report;
}

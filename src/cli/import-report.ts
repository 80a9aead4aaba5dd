import type { ImportReport } from '../partners/import.js';
import { say } from './i18n.js';
import type { MessageKey } from './i18n/messages.js';
import { printJson } from './output.js';

/**
 * Prints the report of an import of entries (calendars, fee schedules): each entry applied, each
 * refusal with its field and rule, then `doneKey` when it was committed. The exit code is 1 when
 * anything was refused.
 */
export function printEntryImport(report: ImportReport, json: boolean, doneKey: MessageKey): void {
  if (json) {
    printJson(report);
  } else {
    for (const a of report.applied)
      process.stdout.write(`${say('import.entry.applied', { index: String(a.index), action: a.action, id: a.id })}\n`);
    for (const r of report.rejected) {
      // Index -1: the file is neither an entry nor an array of entries.
      if (r.index === -1) {
        process.stdout.write(`${say('import.file.entries')}\n`);
        continue;
      }
      for (const d of r.details) {
        const params = { index: String(r.index), field: d.field, rule: d.rule };
        process.stdout.write(
          `${d.message === undefined ? say('import.entry.rejected', params) : say('import.entry.rejectedWhy', { ...params, message: String(d.message) })}\n`,
        );
      }
    }
    if (report.committed) process.stdout.write(`${say(doneKey)}\n`);
    else if (!report.rejected.some((r) => r.index === -1)) process.stdout.write(`${say('import.entry.nothing')}\n`);
  }
  if (report.rejected.length > 0) process.exitCode = 1;
}

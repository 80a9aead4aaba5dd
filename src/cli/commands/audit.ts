import type { Command } from 'commander';
import { isCalendarDate } from '../../lib/dates.js';
import { withDeployment } from '../context.js';
import { say } from '../i18n.js';
import { CliError, printJson } from '../output.js';

function dateOf(value: string): string {
  if (!isCalendarDate(value)) throw new CliError({ key: 'audit.date', params: { value } });
  return value;
}

export function registerAudit(program: Command): void {
  const audit = program.command('audit').description('Daily Merkle snapshots of orders (docs/audit.md)');

  audit
    .command('snapshot')
    .description('Build the snapshot of a past day (and any missing day before it), then anchor it')
    .requiredOption('--date <YYYY-MM-DD>', 'the UTC day')
    .option('--wait', 'keep anchoring until the receipt arrives (default: one step; the service worker finishes)')
    .option('--json', 'print as JSON')
    .action(async (options: { date: string; wait?: boolean; json?: boolean }) => {
      const date = dateOf(options.date);
      const out = await withDeployment(async ({ services }) => {
        let built;
        try {
          built = await services.audit.build(date);
        } catch (error) {
          if (error instanceof RangeError) throw new CliError(error.message);
          throw error;
        }
        const deadline = Date.now() + 10 * 60_000;
        for (;;) {
          await services.audit.advanceAnchoring(Date.now());
          const row = await services.audit.status(date);
          if (options.wait !== true || row?.state === 'anchored' || Date.now() > deadline) {
            return {
              built,
              date,
              state: row?.state ?? null,
              merkle_root: row?.merkle_root ?? null,
              count: row?.count ?? null,
              anchor_tx_hash: row?.anchor_tx_hash ?? null,
              anchor_error: row?.anchor_error ?? null,
            };
          }
          await new Promise((r) => setTimeout(r, 2000));
        }
      });
      if (options.json === true) printJson(out);
      else {
        for (const b of out.built)
          process.stdout.write(
            `${
              b.outcome === 'built'
                ? say('audit.built', { date: b.date, count: String(b.count), root: b.merkle_root })
                : say(b.outcome === 'exists' ? 'audit.exists' : 'audit.busy', { date: b.date })
            }\n`,
          );
        const day =
          out.state === null
            ? say('audit.notBuilt', { date: out.date })
            : out.anchor_error === null
              ? say('audit.state', { date: out.date, state: out.state })
              : say('audit.state.error', { date: out.date, state: out.state, error: out.anchor_error });
        process.stdout.write(`${day}\n`);
      }
    });

  audit
    .command('verify')
    .description('Recompute a built day from the orders and compare with the stored root (writes nothing)')
    .requiredOption('--date <YYYY-MM-DD>', 'the UTC day')
    .option('--json', 'print as JSON')
    .action(async (options: { date: string; json?: boolean }) => {
      const date = dateOf(options.date);
      const out = await withDeployment(async ({ services }) => {
        const row = await services.audit.status(date);
        if (row === undefined || row.merkle_root === null) throw new CliError({ key: 'audit.none', params: { date } });
        const again = await services.audit.recompute(date);
        return {
          date,
          stored: { merkle_root: row.merkle_root, count: row.count },
          recomputed: again,
          same: again.merkle_root === row.merkle_root && again.count === row.count,
        };
      });
      if (options.json === true) printJson(out);
      else
        process.stdout.write(
          `${say(out.same ? 'audit.same' : 'audit.different', { date, count: String(out.recomputed.count), root: out.recomputed.merkle_root })}\n`,
        );
      if (!out.same) process.exitCode = 1;
    });
}

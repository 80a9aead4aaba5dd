import type { Command } from 'commander';
import { IntegratorApi, apiErrorOf } from '../integrator/api.js';
import { resolveCredentials } from '../integrator/credentials.js';
import { readJsonFile } from '../json-file.js';
import { say, sayCount } from '../i18n.js';
import { printJson, printTable } from '../output.js';

/**
 * `cauri positions ...`: investors' positions and the statements of holdings they start from, on
 * the remote service, with the credentials of `cauri login` (scope `orders:read`; `orders:write` to
 * declare a statement).
 */

const POSITION_COLUMNS = [
  'subject_id',
  'rcpt_to',
  'instrument',
  'qty',
  'settled_qty',
  'average_cost_cents',
  'reference_price_cents',
  'market_value_cents',
  'unrealised_pnl_cents',
  'realised_pnl_cents',
  'currency',
];
const BREAK_COLUMNS = ['instrument', 'statement_qty', 'expected_qty', 'difference_qty'];
const STATEMENT_COLUMNS = ['id', 'subject_id', 'rcpt_to', 'as_of', 'breaks', 'replaced_by', 'created_at'];

interface Statement {
  id: string;
  as_of: string;
  breaks: Record<string, unknown>[];
  previous_statement_id: string | null;
  replaces: string | null;
  [member: string]: unknown;
}

function api(): IntegratorApi {
  return new IntegratorApi(resolveCredentials());
}

/** Every page of a listing, following X-Cursor-Next. */
async function all<T>(client: IntegratorApi, path: string, query: URLSearchParams): Promise<T[]> {
  const out: T[] = [];
  for (let cursor = ''; ; ) {
    if (cursor !== '') query.set('cursor', cursor);
    const res = await client.send('GET', `${path}?${query.toString()}`);
    if (res.status !== 200) throw await apiErrorOf(res, `GET ${path}`);
    out.push(...((await res.json()) as { data: T[] }).data);
    cursor = res.headers.get('x-cursor-next') ?? '';
    if (cursor === '') return out;
  }
}

export function registerPositions(program: Command): void {
  const positions = program.command('positions').description("Investors' positions and statements of holdings, on the remote service");

  positions
    .command('list')
    .description('List positions (per subject, partner and instrument), every page')
    .option('--subject <subject_id>', "only this subject's")
    .option('--partner <sgi_id>', 'only those held at this partner')
    .option('--instrument <code>', 'only this instrument, such as SNTS.BRVM')
    .option('--json', 'print the positions as JSON')
    .action(async (options: { subject?: string; partner?: string; instrument?: string; json?: boolean }) => {
      const query = new URLSearchParams({ limit: '200' });
      if (options.subject !== undefined) query.set('subject_id', options.subject);
      if (options.partner !== undefined) query.set('rcpt_to', options.partner);
      if (options.instrument !== undefined) query.set('instrument', options.instrument);
      const data = await all<Record<string, unknown>>(api(), '/v1/positions', query);
      if (options.json === true) printJson(data);
      else printTable(data, POSITION_COLUMNS);
    });

  positions
    .command('declare <file>')
    .description(
      "Declare a statement of a subject's holdings at a partner, from a JSON file: { subject_id, rcpt_to, as_of, holdings: [{ instrument, qty, average_cost_cents }] }",
    )
    .option('--json', 'print the statement as the service answered it')
    .action(async (file: string, options: { json?: boolean }) => {
      const answer = await api().mutate<Statement>('/v1/positions/statements', readJsonFile(file));
      const statement = answer.body;
      if (options.json === true) {
        printJson(statement);
        return;
      }
      const breaks =
        statement.breaks.length === 0
          ? say('positions.noBreak')
          : sayCount({ one: 'positions.breaks.one', other: 'positions.breaks.other' }, statement.breaks.length);
      const params = { id: statement.id, asOf: statement.as_of, breaks };
      process.stdout.write(
        `${
          statement.replaces === null
            ? say('positions.declared', params)
            : say('positions.declared.replacing', { ...params, replaced: statement.replaces })
        }\n`,
      );
      if (statement.breaks.length > 0) printTable(statement.breaks, BREAK_COLUMNS);
    });

  positions
    .command('statements')
    .description('List statements, newest first (the first 200)')
    .option('--subject <subject_id>', "only this subject's")
    .option('--partner <sgi_id>', 'only those of this partner')
    .option('--json', 'print the statements as JSON')
    .action(async (options: { subject?: string; partner?: string; json?: boolean }) => {
      const query = new URLSearchParams({ limit: '200' });
      if (options.subject !== undefined) query.set('subject_id', options.subject);
      if (options.partner !== undefined) query.set('rcpt_to', options.partner);
      const { data } = await api().json<{ data: Statement[] }>('GET', `/v1/positions/statements?${query.toString()}`);
      if (options.json === true) printJson(data);
      else
        printTable(
          data.map((s) => ({ ...s, breaks: s.breaks.length })),
          STATEMENT_COLUMNS,
        );
    });
}

import type { Kysely } from 'kysely';
import { notFound, type ErrorDetail } from '../lib/errors.js';
import { isId, newId } from '../lib/ids.js';
import { compileValidator } from '../lib/validation.js';
import type { Database } from '../storage/schema.js';
import { findPartner, findPartnerByName, listPartners, upsertPartner } from './partner.repository.js';
import { PartnerImportRow, type SgiPartner } from './partner.schemas.js';
import type { PartnerRow } from './partner.table.js';
import type { Capability, Jurisdiction } from './markets.js';
import { runImport, type ImportReport } from './import.js';
import { resolvePartnerChecks, type PartnerChecks } from './core/checks.js';
import { checkFixMember, resolveFixSettings } from './fix-settings.js';
import { validatePartnerFees } from './fee-file.js';
import { upsertSchedule } from './fee-schedule.repository.js';
import { partnerFeeRows } from './fee-schedule.service.js';
import type { FeeScheduleRow } from './fee-schedule.table.js';

export type { ImportReport } from './import.js';

export function toSgiPartner(row: PartnerRow): SgiPartner {
  return {
    id: row.id,
    name: row.name,
    jurisdiction: row.jurisdiction as Jurisdiction,
    capabilities: JSON.parse(row.capabilities) as Capability[],
    ...(row.approved_since === null ? {} : { approved_since: row.approved_since }),
  };
}

export interface Page<T> {
  items: T[];
  /** Sort key of the last item when another page follows, else null. */
  nextAfter: string | null;
}

export async function listDirectory(
  db: Kysely<Database>,
  q: { afterId: string | null; limit: number; jurisdiction?: Jurisdiction; capability?: Capability },
): Promise<Page<SgiPartner>> {
  const rows = await listPartners(db, { ...q, approvedOnly: true });
  const hasMore = rows.length > q.limit;
  const items = rows.slice(0, q.limit).map(toSgiPartner);
  return { items, nextAfter: hasMore ? (items[items.length - 1]?.id ?? null) : null };
}

/** An approved partner; anything else (unknown, malformed, not approved) is not in the directory. */
export async function getDirectoryPartner(db: Kysely<Database>, id: string): Promise<SgiPartner> {
  const row = isId('partner', id) ? await findPartner(db, id) : undefined;
  if (row === undefined || row.status !== 'approved') throw notFound('SGI partner', id);
  return toSgiPartner(row);
}

const validatePartnerRow = compileValidator(PartnerImportRow, 'row');

/** The checks that are on, as JSON (`{"holdings":true}`); null for a partner that requires nothing more, as the partners of before checks existed. */
function storedChecks(checks: PartnerChecks): string | null {
  const on = Object.fromEntries(Object.entries(checks).filter(([, value]) => value));
  return Object.keys(on).length > 0 ? JSON.stringify(on) : null;
}

/**
 * Inserts or updates partners (matched by id, else by name); the contract of runImport. A `fix`
 * member (the FIX session settings) goes with `"connector": "fix"`; `tls: false` is refused unless
 * `fixPlaintextAllowed` (sandbox, or production with CAURI_FIX_ALLOW_PLAINTEXT=true). `fix` and
 * `checks` left out keep what the partner had. A `fees` member writes each commission schedule
 * version it lists (replacing a stored one of the same date) and leaves the others as stored.
 */
export async function importPartners(
  trx: Kysely<Database>,
  input: unknown,
  options: { now: Date; allowPartial?: boolean; defaultConnector?: string; fixPlaintextAllowed?: boolean },
): Promise<ImportReport> {
  const names = new Map<string, number>();
  const ids = new Map<string, number>();
  return runImport<PartnerImportRow, { partner: PartnerRow; fees: FeeScheduleRow[] }>(
    input,
    'partners',
    options,
    validatePartnerRow,
    async (row, index) => {
      const byName = await findPartnerByName(trx, row.name);
      const existing = row.id !== undefined ? await findPartner(trx, row.id) : byName;
      const id = existing?.id ?? row.id ?? newId('partner', options.now.getTime());
      const details: ErrorDetail[] = [];
      if (byName !== undefined && byName.id !== id)
        details.push({ field: 'name', rule: 'unique', value: row.name, message: `name already used by ${byName.id}` });
      if (names.has(row.name))
        details.push({ field: 'name', rule: 'unique', value: row.name, message: `same name as row ${names.get(row.name)}` });
      if (ids.has(id)) details.push({ field: 'id', rule: 'unique', value: id, message: `same id as row ${ids.get(id)}` });
      const connector = row.connector ?? existing?.connector ?? options.defaultConnector ?? 'sandbox';
      if (row.fix !== undefined)
        details.push(...checkFixMember(row.fix, { connector, plaintextAllowed: options.fixPlaintextAllowed === true }));
      const fix = row.fix === undefined ? (existing?.fix ?? null) : JSON.stringify(resolveFixSettings(row.fix));
      const checks = row.checks === undefined ? (existing?.checks ?? null) : storedChecks(resolvePartnerChecks(row.checks));
      if (connector === 'fix' && fix === null)
        details.push({ field: 'fix', rule: 'required', value: null, message: 'a partner with "connector": "fix" needs its fix member' });
      if (row.fees !== undefined) details.push(...validatePartnerFees(row.fees));
      if (details.length > 0) return { details };
      names.set(row.name, index);
      ids.set(id, index);
      const status = row.status ?? 'approved';
      return {
        id,
        action: existing === undefined ? 'created' : 'updated',
        row: {
          fees: partnerFeeRows(id, row.fees ?? [], options.now.getTime()),
          partner: {
            id,
            name: row.name,
            jurisdiction: row.jurisdiction,
            capabilities: JSON.stringify(row.capabilities),
            approved_since:
              row.approved_since ?? (status === 'approved' ? (existing?.approved_since ?? options.now.toISOString().slice(0, 10)) : null),
            status,
            connector,
            fix,
            fix_credentials: existing?.fix_credentials ?? null,
            checks,
            fix_tls: existing?.fix_tls ?? null,
            created_at: existing?.created_at ?? options.now.getTime(),
            updated_at: options.now.getTime(),
          },
        },
      };
    },
    async ({ partner, fees }) => {
      await upsertPartner(trx, partner);
      for (const version of fees) await upsertSchedule(trx, version);
    },
  );
}

import type { Kysely } from 'kysely';
import { PreparedQuery } from '../storage/prepared.js';
import type { Database } from '../storage/schema.js';
import type { InstrumentRow } from './instrument.table.js';

export interface InstrumentQuery {
  afterCode: string | null;
  limit: number;
  exchange?: string;
  class?: string;
  status?: string;
}

export async function listInstruments(db: Kysely<Database>, q: InstrumentQuery): Promise<InstrumentRow[]> {
  let query = db
    .selectFrom('instruments')
    .selectAll()
    .orderBy('code')
    .limit(q.limit + 1);
  if (q.afterCode !== null) query = query.where('code', '>', q.afterCode);
  if (q.exchange !== undefined) query = query.where('exchange', '=', q.exchange);
  if (q.class !== undefined) query = query.where('class', '=', q.class);
  if (q.status !== undefined) query = query.where('status', '=', q.status as InstrumentRow['status']);
  return query.execute();
}

const instrumentByCode = new PreparedQuery(1, (qb, code: string) => qb.selectFrom('instruments').selectAll().where('code', '=', code));

export async function findInstrument(db: Kysely<Database>, code: string): Promise<InstrumentRow | undefined> {
  return instrumentByCode.first(db, code);
}

export async function upsertInstrument(db: Kysely<Database>, row: InstrumentRow): Promise<void> {
  const { code: _code, created_at: _created, ...changes } = row;
  await db
    .insertInto('instruments')
    .values(row)
    .onConflict((oc) => oc.column('code').doUpdateSet(changes))
    .execute();
}

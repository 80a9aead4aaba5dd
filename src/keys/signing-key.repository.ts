import { sql, type Kysely } from 'kysely';
import { dialectOf, type DialectName } from '../storage/dialect.js';
import { PreparedQuery } from '../storage/prepared.js';
import type { Database } from '../storage/schema.js';
import type { KeyPurpose, SigningKeyRow } from './signing-key.table.js';

export async function listKeys(db: Kysely<Database>, purpose: KeyPurpose): Promise<SigningKeyRow[]> {
  return db.selectFrom('signing_keys').selectAll().where('purpose', '=', purpose).orderBy('valid_from').execute();
}

export async function findKey(db: Kysely<Database>, id: string): Promise<SigningKeyRow | undefined> {
  return db.selectFrom('signing_keys').selectAll().where('id', '=', id).executeTakeFirst();
}

const openKey = (db: Kysely<Database>, purpose: KeyPurpose) =>
  db.selectFrom('signing_keys').selectAll().where('purpose', '=', purpose).where('valid_until', 'is', null);
const currentKey = new PreparedQuery(1, openKey);
const currentKeyForShare = new PreparedQuery(1, (db, purpose: KeyPurpose) => openKey(db, purpose).modifyEnd(sql`for share`));
const currentKeyForUpdate = new PreparedQuery(1, (db, purpose: KeyPurpose) => openKey(db, purpose).forUpdate());

/**
 * The open key of a purpose. On PostgreSQL the row is read `FOR SHARE`, so a rotation (which locks it
 * `FOR UPDATE` before closing its window) waits for signers that already chose it, and a signer that
 * waited for a rotation sees the row no longer open and reads again.
 */
export async function findCurrentKey(
  db: Kysely<Database>,
  dialect: DialectName,
  purpose: KeyPurpose,
  lock: 'share' | 'update' | 'none',
): Promise<SigningKeyRow | undefined> {
  const locking = lock === 'share' ? currentKeyForShare : lock === 'update' ? currentKeyForUpdate : currentKey;
  return dialectOf(dialect).rowLocked({ locking, plain: currentKey }).first(db, purpose);
}

export async function insertKey(db: Kysely<Database>, row: SigningKeyRow): Promise<void> {
  await db.insertInto('signing_keys').values(row).execute();
}

export async function closeKey(db: Kysely<Database>, id: string, at: number): Promise<void> {
  await db.updateTable('signing_keys').set({ valid_until: at }).where('id', '=', id).execute();
}

import { sql, type Kysely } from 'kysely';
import { dialectOf, type DialectName } from '../storage/dialect.js';
import { PreparedInsert, PreparedQuery } from '../storage/prepared.js';
import type { Database } from '../storage/schema.js';
import type { AttestationRow, RevocationReason } from './attestation.table.js';

const attestationInsert = new PreparedInsert('attestations');

export async function insertAttestation(db: Kysely<Database>, row: AttestationRow): Promise<void> {
  await attestationInsert.run(db, row);
}

const attestationOfClient = (db: Kysely<Database>, clientId: string, id: string) =>
  db.selectFrom('attestations').selectAll().where('id', '=', id).where('client_id', '=', clientId);
const clientAttestation = new PreparedQuery(2, attestationOfClient);

/** An attestation of this client; another client's is as absent as an unknown one. */
export async function findClientAttestation(db: Kysely<Database>, clientId: string, id: string): Promise<AttestationRow | undefined> {
  return clientAttestation.first(db, clientId, id);
}

const clientAttestationDocument = new PreparedQuery(2, (db, clientId: string, id: string) =>
  db.selectFrom('attestations').select('document').where('id', '=', id).where('client_id', '=', clientId),
);

/**
 * Only the signed document of an attestation of this client (the read endpoint's whole answer):
 * building a JS object of every column cost more than the SQLite lookup itself.
 */
export async function findClientAttestationDocument(db: Kysely<Database>, clientId: string, id: string): Promise<string | undefined> {
  return (await clientAttestationDocument.first(db, clientId, id))?.document;
}

const clientAttestationForShare = new PreparedQuery(2, (db, clientId: string, id: string) =>
  attestationOfClient(db, clientId, id).modifyEnd(sql`for share`),
);

/**
 * The same, read `FOR SHARE` on PostgreSQL: a revocation (an UPDATE of the row) then waits for the
 * reading transaction, so no order can be accepted under an attestation after its revoke returned.
 */
export async function findClientAttestationShared(
  db: Kysely<Database>,
  dialect: DialectName,
  clientId: string,
  id: string,
): Promise<AttestationRow | undefined> {
  return dialectOf(dialect).rowLocked({ locking: clientAttestationForShare, plain: clientAttestation }).first(db, clientId, id);
}

export async function maxCrlNumber(db: Kysely<Database>): Promise<number> {
  const row = await db
    .selectFrom('attestations')
    .select((eb) => eb.fn.max('crl_number').as('n'))
    .executeTakeFirst();
  return row?.n === null || row?.n === undefined ? 0 : Number(row.n);
}

export async function markRevoked(
  db: Kysely<Database>,
  id: string,
  revokedAt: number,
  reason: RevocationReason,
  crlNumber: number,
): Promise<void> {
  await db
    .updateTable('attestations')
    .set({ revoked_at: revokedAt, revocation_reason: reason, crl_number: crlNumber })
    .where('id', '=', id)
    .execute();
}

export interface RevokedRow {
  id: string;
  revoked_at: number;
  revocation_reason: RevocationReason;
  crl_number: number;
}

/** The revocations numbered after `since` up to `upTo` (both list numbers), in their order. */
export async function listRevocations(db: Kysely<Database>, since: number, upTo: number): Promise<RevokedRow[]> {
  const rows = await db
    .selectFrom('attestations')
    .select(['id', 'revoked_at', 'revocation_reason', 'crl_number'])
    .where('crl_number', '>', since)
    .where('crl_number', '<=', upTo)
    .orderBy('crl_number')
    .execute();
  return rows as RevokedRow[];
}

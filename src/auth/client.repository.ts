import type { Kysely } from 'kysely';
import { PreparedQuery } from '../storage/prepared.js';
import type { Database } from '../storage/schema.js';
import type { ClientRow, ClientSecretTable } from './client.table.js';

export async function insertClient(db: Kysely<Database>, row: ClientRow): Promise<void> {
  await db.insertInto('clients').values(row).execute();
}

export async function findClient(db: Kysely<Database>, id: string): Promise<ClientRow | undefined> {
  return db.selectFrom('clients').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listClients(db: Kysely<Database>): Promise<ClientRow[]> {
  return db.selectFrom('clients').selectAll().orderBy('id').execute();
}

export async function setClientStatus(db: Kysely<Database>, id: string, status: ClientRow['status'], at: number | null): Promise<number> {
  const result = await db.updateTable('clients').set({ status, disabled_at: at }).where('id', '=', id).executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export async function insertSecret(db: Kysely<Database>, row: ClientSecretTable): Promise<void> {
  await db.insertInto('client_secrets').values(row).execute();
}

/** Gives every secret of the client that has no expiry yet the expiry `at` (rotation). */
export async function expireOpenSecrets(db: Kysely<Database>, clientId: string, at: number): Promise<void> {
  await db.updateTable('client_secrets').set({ expires_at: at }).where('client_id', '=', clientId).where('expires_at', 'is', null).execute();
}

const clientBySecret = new PreparedQuery(1, (db, hash: string) =>
  db
    .selectFrom('client_secrets')
    .innerJoin('clients', 'clients.id', 'client_secrets.client_id')
    .select(['clients.id', 'clients.status', 'clients.scopes', 'client_secrets.expires_at as secret_expires_at'])
    .where('client_secrets.hash', '=', hash),
);

/** What the token endpoint needs of the client a secret belongs to. */
export type SecretOwner = Pick<ClientRow, 'id' | 'status' | 'scopes'> & { secret_expires_at: number | null };

/** The client a secret hash belongs to, with the secret's expiry: one indexed join, only the columns the check uses. */
export async function findClientBySecret(db: Kysely<Database>, hash: string): Promise<SecretOwner | undefined> {
  return clientBySecret.first(db, hash);
}

const statusOfClient = new PreparedQuery(1, (db, id: string) => db.selectFrom('clients').select('status').where('id', '=', id));

/** Current client status, read on every authenticated request so that disabling takes effect at once. */
export async function clientStatus(db: Kysely<Database>, id: string): Promise<ClientRow['status'] | undefined> {
  return (await statusOfClient.first(db, id))?.status;
}

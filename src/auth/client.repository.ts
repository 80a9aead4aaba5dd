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

/** Disables the client as of `at`; the number of clients changed (0 or 1). */
export async function disableClient(db: Kysely<Database>, id: string, at: number): Promise<number> {
  const result = await db.updateTable('clients').set({ status: 'disabled', disabled_at: at }).where('id', '=', id).executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Enables the client; `disabled_at` stays, since tokens issued before it stay refused. */
export async function enableClient(db: Kysely<Database>, id: string): Promise<number> {
  const result = await db.updateTable('clients').set({ status: 'active' }).where('id', '=', id).executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export async function insertSecret(db: Kysely<Database>, row: ClientSecretTable): Promise<void> {
  await db.insertInto('client_secrets').values(row).execute();
}

/** Gives every secret of the client that has no expiry yet the expiry `at` (rotation). */
export async function expireOpenSecrets(db: Kysely<Database>, clientId: string, at: number): Promise<void> {
  await db
    .updateTable('client_secrets')
    .set({ expires_at: at })
    .where('client_id', '=', clientId)
    .where('expires_at', 'is', null)
    .execute();
}

/**
 * Ends at `at` every secret of the client that still works then: all of them, or only the previous
 * ones (those given an expiry by a rotation), which leaves the current secret working. Returns how
 * many it ended.
 */
export async function endSecrets(db: Kysely<Database>, clientId: string, at: number, which: 'all' | 'previous'): Promise<number> {
  const result = await db
    .updateTable('client_secrets')
    .set({ expires_at: at })
    .where('client_id', '=', clientId)
    .where((eb) => (which === 'all' ? eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', at)]) : eb('expires_at', '>', at)))
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
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

/** What decides whether a client's access token is accepted: its status and when it was last disabled. */
export type ClientState = Pick<ClientRow, 'status' | 'disabled_at'>;

const stateOfClient = new PreparedQuery(1, (db, id: string) =>
  db.selectFrom('clients').select(['status', 'disabled_at']).where('id', '=', id),
);

/** Current client state, read on every authenticated request so that disabling takes effect at once. */
export async function clientState(db: Kysely<Database>, id: string): Promise<ClientState | undefined> {
  return stateOfClient.first(db, id);
}

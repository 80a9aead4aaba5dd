import { Migrator, sql, type DatabaseIntrospector, type Kysely, type Migration, type MigrationProvider, type Transaction } from 'kysely';
import * as foundation from './migrations/2026-11-22T05-00-foundation.js';
import * as auth from './migrations/2026-11-22T06-00-auth.js';
import * as kyc from './migrations/2026-11-22T07-00-kyc.js';
import * as orders from './migrations/2026-11-22T08-00-orders.js';
import * as webhooks from './migrations/2026-11-22T09-00-webhooks.js';
import * as audit from './migrations/2026-11-22T10-00-audit.js';
import * as webhookIndexes from './migrations/2026-11-22T11-00-webhook-indexes.js';
import * as webhookQueueIndexes from './migrations/2026-11-24T09-00-webhook-queue-indexes.js';
import * as eventQueue from './migrations/2026-11-24T10-00-event-queue.js';
import * as openOrdersIndex from './migrations/2026-11-24T11-00-open-orders-index.js';
import * as deadLettersByClient from './migrations/2026-11-24T12-00-dead-letters-by-client.js';
import * as unreadIndexes from './migrations/2026-11-24T13-00-unread-indexes.js';
import * as orderListingIndexes from './migrations/2026-11-24T14-00-order-listing-indexes.js';
import * as deferredDeliveryListing from './migrations/2026-11-24T15-00-deferred-delivery-listing.js';
import * as calendars from './migrations/2026-11-25T00-00-calendars.js';
import * as instrumentRules from './migrations/2026-11-25T01-00-instrument-rules.js';
import * as orderLifecycle from './migrations/2026-11-25T02-00-order-lifecycle.js';
import * as fixSessions from './migrations/2026-11-25T03-00-fix-sessions.js';
import * as testClocks from './migrations/2026-11-25T04-00-test-clocks.js';
import * as investorAccounts from './migrations/2026-11-25T05-00-investor-accounts.js';
import * as fixTls from './migrations/2026-11-25T06-00-fix-tls.js';
import * as positions from './migrations/2026-11-26T03-00-positions.js';
import * as fees from './migrations/2026-11-25T07-00-fees.js';
import * as eventOrigin from './migrations/2026-11-25T10-00-event-origin.js';
import * as changeNotifications from './migrations/2026-11-26T04-00-change-notifications.js';

/**
 * The migrations, listed explicitly rather than read from a folder, so that bundlers and tools see
 * them and their order is the order of this list.
 */
const MIGRATIONS: Record<string, Migration> = {
  '2026-11-22T05-00-foundation': foundation,
  '2026-11-22T06-00-auth': auth,
  '2026-11-22T07-00-kyc': kyc,
  '2026-11-22T08-00-orders': orders,
  '2026-11-22T09-00-webhooks': webhooks,
  '2026-11-22T10-00-audit': audit,
  '2026-11-22T11-00-webhook-indexes': webhookIndexes,
  '2026-11-24T09-00-webhook-queue-indexes': webhookQueueIndexes,
  '2026-11-24T10-00-event-queue': eventQueue,
  '2026-11-24T11-00-open-orders-index': openOrdersIndex,
  '2026-11-24T12-00-dead-letters-by-client': deadLettersByClient,
  '2026-11-24T13-00-unread-indexes': unreadIndexes,
  '2026-11-24T14-00-order-listing-indexes': orderListingIndexes,
  '2026-11-24T15-00-deferred-delivery-listing': deferredDeliveryListing,
  '2026-11-25T00-00-calendars': calendars,
  '2026-11-25T01-00-instrument-rules': instrumentRules,
  '2026-11-25T02-00-order-lifecycle': orderLifecycle,
  '2026-11-25T03-00-fix-sessions': fixSessions,
  '2026-11-25T04-00-test-clocks': testClocks,
  '2026-11-25T05-00-investor-accounts': investorAccounts,
  '2026-11-25T06-00-fix-tls': fixTls,
  '2026-11-25T07-00-fees': fees,
  '2026-11-26T03-00-positions': positions,
  '2026-11-25T10-00-event-origin': eventOrigin,
  '2026-11-26T04-00-change-notifications': changeNotifications,
};

const provider: MigrationProvider = { getMigrations: async () => MIGRATIONS };

export interface MigrationReport {
  applied: string[];
}

/**
 * Applies pending migrations. `schema` names where the migration bookkeeping lives on PostgreSQL:
 * without it Kysely looks for its tables in every schema of the database, and a deployment (or a
 * test run) sharing a database with another schema would see the other's bookkeeping.
 */
export async function migrateToLatest(db: Kysely<any>, schema?: string): Promise<MigrationReport> {
  return migrateUpTo(db, undefined, schema);
}

/**
 * Applies the pending migrations up to and including `name` (all of them when undefined): an upgrade
 * test starts from the schema an older version left, with its data, and migrates the rest.
 */
export async function migrateUpTo(db: Kysely<any>, name: string | undefined, schema?: string): Promise<MigrationReport> {
  if (name !== undefined && !(name in MIGRATIONS)) throw new Error(`unknown migration ${name}`);
  // On PostgreSQL the migrator runs in a transaction under an advisory lock. On SQLite it runs
  // without either, so processes starting together on one file would each apply the same migration;
  // here the whole run is one transaction, which takes SQLite's write lock before it reads the state.
  if (!db.getExecutor().adapter.supportsTransactionalDdl)
    return db.transaction().execute((trx) => migrate(asConnection(trx), schema, name));
  for (let attempt = 1; ; attempt++) {
    try {
      return await migrate(db, schema, name);
    } catch (error) {
      if (attempt >= CATALOG_RACE_ATTEMPTS || !isCatalogRace(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20 * attempt + Math.random() * 50));
    }
  }
}

const CATALOG_RACE_ATTEMPTS = 10;

/**
 * Kysely's migrator looks for its bookkeeping tables (reading the catalog, then creating them if
 * absent) before it takes its advisory lock. While another process starting at the same moment runs
 * a migration, that look-up can fail on a table being created or dropped (42P01 undefined_table), and
 * two creations of the bookkeeping tables can collide (42P07 duplicate_table, or 23505 on the
 * catalog's unique index of type names). Nothing has been applied then, so the run starts over.
 */
function isCatalogRace(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '42P01' || code === '42P07' || code === '23505';
}

/**
 * The migrator asks its database for a connection, which a transaction refuses to give; the
 * transaction already is one connection, so this hands it over as its own connection.
 */
function asConnection(trx: Transaction<any>): Kysely<any> {
  return new Proxy(trx, {
    get(target, property) {
      if (property === 'connection') return () => ({ execute: <T>(callback: (db: Kysely<any>) => Promise<T>) => callback(target) });
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

async function migrate(db: Kysely<any>, schema: string | undefined, name: string | undefined): Promise<MigrationReport> {
  const migrator = new Migrator({
    db: schema === undefined ? db : lookingOnlyIn(db, schema),
    provider,
    ...(schema === undefined ? {} : { migrationTableSchema: schema }),
  });
  if (name !== undefined && (await migrator.getMigrations()).some((m) => m.name === name && m.executedAt !== undefined))
    return { applied: [] };
  // Only ever forwards: migrateTo would also undo the migrations after `name`, which is refused above.
  const { error, results } = name === undefined ? await migrator.migrateToLatest() : await migrator.migrateTo(name);
  if (error !== undefined) throw error instanceof Error ? error : new Error(String(error));
  return { applied: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName) };
}

/**
 * The migrator finds its bookkeeping tables through the dialect's introspector, which on PostgreSQL
 * reads every table and column of every schema of the database: on a database that holds many
 * schemas (several deployments, or a test run) that look-up grows with all of them. The migrator
 * needs only the names of the tables of its own schema; this hands it an introspector that reads
 * just those.
 */
function lookingOnlyIn(db: Kysely<any>, schema: string): Kysely<any> {
  const introspection: DatabaseIntrospector = {
    getSchemas: async () => {
      const { rows } = await sql<{ name: string }>`select nspname as name from pg_catalog.pg_namespace where nspname = ${schema}`.execute(
        db,
      );
      return rows;
    },
    getTables: async () => {
      const { rows } = await sql<{ name: string; kind: string }>`
        select c.relname as name, c.relkind as kind from pg_catalog.pg_class c
        join pg_catalog.pg_namespace n on n.oid = c.relnamespace
        where n.nspname = ${schema} and c.relkind in ('r', 'p', 'v', 'm', 'f')`.execute(db);
      return rows.map((r) => ({ name: r.name, schema, isView: r.kind === 'v' || r.kind === 'm', columns: [] }));
    },
    getMetadata: async () => ({ tables: await introspection.getTables() }),
  };
  return new Proxy(db, {
    get(target, property) {
      if (property === 'introspection') return introspection;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

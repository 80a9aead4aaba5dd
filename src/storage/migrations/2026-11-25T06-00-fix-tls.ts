import type { Kysely } from 'kysely';

// Frozen in time: a FIX partner's TLS material (its client certificate and private key, and the
// certificate authorities its gateway's certificate chains to), sealed with the master key like its
// logon credentials. Null: no client certificate, and the gateway's certificate is checked against
// the public authorities Node.js trusts.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('partners').addColumn('fix_tls', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('partners').dropColumn('fix_tls').execute();
}

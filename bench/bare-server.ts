/**
 * The reference server: a bare Fastify 5 app with the same framework defaults the service uses
 * (JSON schema validation with Ajv, response serialisation with fast-json-stringify) and nothing
 * else: no logging, no hooks, no authentication, no rate limiting.
 *
 *   GET  /bare/json            a JSON page of about BARE_JSON_BYTES bytes (the size of the partners page)
 *   POST /bare/validated       validates a small JSON body against a schema, answers 201 with JSON
 *   POST /bare/durable         the same, after one durable SQLite insert of the answer
 *   POST /bare/signed-durable  the same, signed (Ed25519 over its RFC 8785 form) before the insert
 *
 *   POST /bare/pg-order        the PostgreSQL floor of an order (below), when BARE_DATABASE_URL is set
 *   POST /bare/pg-order-commits the same, with as many commits as the service makes per order
 *
 * The durable routes are floors: the least a route can do that must make a write durable (and sign it)
 * before answering, on the same stack and with the same techniques as the service (one SQLite
 * writer in WAL mode with `synchronous=FULL`, the writes of one turn of the event loop committed
 * together, the signature made on libuv's thread pool), but without idempotency, events, indexes or
 * any check. An endpoint with that work to do cannot reach them; they show how much of a gap to the
 * bare route is the durable write and the signature themselves.
 *
 * Runs in its own process; prints {"address":"http://..."} on stdout once listening. The floors'
 * database is the file BARE_SQLITE_PATH (required; the harness puts it in its data folder).
 */
import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import Fastify from 'fastify';
import { canonicalize } from '@cauri/verifier';

const targetBytes = Number(process.env.BARE_JSON_BYTES ?? '4000');

const Item = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    country: { type: 'string' },
    exchanges: { type: 'array', items: { type: 'string' } },
    status: { type: 'string' },
    website: { type: 'string' },
    created_at: { type: 'string' },
  },
} as const;

function item(i: number) {
  return {
    id: `sgi_${String(i).padStart(20, '0')}`,
    name: `Reference Brokerage Firm ${i}`,
    country: ['CI', 'SN', 'BF', 'GH', 'CM'][i % 5] as string,
    exchanges: i % 2 === 0 ? ['BRVM'] : ['BRVM', 'GSE'],
    status: 'active',
    website: `https://firm-${i}.example`,
    created_at: '2026-01-01T00:00:00Z',
  };
}

/** A page of items whose JSON is about `targetBytes` long. */
function page(): { data: ReturnType<typeof item>[]; has_more: boolean } {
  const data: ReturnType<typeof item>[] = [];
  let size = 30;
  while (size < targetBytes) {
    const next = item(data.length + 1);
    size += JSON.stringify(next).length + 1;
    data.push(next);
  }
  return { data, has_more: true };
}
const PAGE = page();

const ValidatedBody = {
  type: 'object',
  additionalProperties: false,
  required: ['subject_id', 'level', 'jurisdictions', 'verifications'],
  properties: {
    subject_id: { type: 'string', minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9._:-]+$' },
    level: { type: 'string', enum: ['KYC1', 'KYC2', 'KYC3'] },
    jurisdictions: { type: 'array', minItems: 1, maxItems: 10, items: { type: 'string', enum: ['UEMOA', 'CEMAC', 'GH'] } },
    verifications: {
      type: 'array',
      minItems: 1,
      maxItems: 10,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['type', 'verified_at'],
        properties: {
          type: { type: 'string', enum: ['id_doc', 'address', 'selfie', 'liveness', 'source_of_funds', 'pep'] },
          verified_at: { type: 'string', format: 'date-time' },
          method: { type: 'string', maxLength: 64 },
        },
      },
    },
  },
} as const;

const Created = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    received_at: { type: 'string' },
    subject_id: { type: 'string' },
    level: { type: 'string' },
    jurisdictions: { type: 'array', items: { type: 'string' } },
    verifications: { type: 'array', items: { type: 'object', additionalProperties: true } },
    signature: { type: 'string' },
  },
} as const;

interface Body {
  subject_id: string;
  level: string;
  jurisdictions: string[];
  verifications: { type: string; verified_at: string; method?: string }[];
}

const app = Fastify({ logger: false });

const sqlitePath = process.env.BARE_SQLITE_PATH;
if (sqlitePath === undefined || sqlitePath === '') throw new Error("BARE_SQLITE_PATH must name the floor routes' database file");
const db = new SqliteDatabase(sqlitePath);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.exec('create table if not exists documents (id text primary key, document text not null)');
const insert = db.prepare('insert into documents (id, document) values (?, ?)');

/** Rows queued during this turn of the event loop, written in one transaction and one fsync. */
let pending: { id: string; document: string; done: () => void }[] = [];
function commitPending(): void {
  const batch = pending;
  pending = [];
  db.exec('begin immediate');
  for (const row of batch) insert.run(row.id, row.document);
  db.exec('commit');
  for (const row of batch) row.done();
}
function durableInsert(id: string, document: string): Promise<void> {
  return new Promise((resolve) => {
    if (pending.length === 0) setImmediate(commitPending);
    pending.push({ id, document, done: resolve });
  });
}

const { privateKey } = generateKeyPairSync('ed25519');
function signOnPool(data: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    sign(null, data, privateKey, (error, signature) => (error === null ? resolve(signature) : reject(error))),
  );
}

app.get(
  '/bare/json',
  {
    schema: { response: { 200: { type: 'object', properties: { data: { type: 'array', items: Item }, has_more: { type: 'boolean' } } } } },
  },
  async () => PAGE,
);

const postSchema = { schema: { body: ValidatedBody, response: { 201: Created } } };
/** The answer of every bare POST: the body with an id and the time it was received. */
const received = (body: Body) => ({ id: randomUUID(), received_at: new Date().toISOString(), ...body });

app.post<{ Body: Body }>('/bare/validated', postSchema, async (request, reply) => {
  reply.code(201);
  return received(request.body);
});

app.post<{ Body: Body }>('/bare/durable', postSchema, async (request, reply) => {
  const document = received(request.body);
  await durableInsert(document.id, JSON.stringify(document));
  reply.code(201);
  return document;
});

app.post<{ Body: Body }>('/bare/signed-durable', postSchema, async (request, reply) => {
  const unsigned = received(request.body);
  const document = { ...unsigned, signature: (await signOnPool(Buffer.from(canonicalize(unsigned)))).toString('base64url') };
  await durableInsert(document.id, JSON.stringify(document));
  reply.code(201);
  return document;
});

/**
 * The PostgreSQL floor of an order (when BARE_DATABASE_URL names a server): the durable minimum of
 * `POST /v1/orders` there, one transaction inserting the order and its event (one statement), then
 * one recording the hand-over, each committed before the next step, on a pool of 10 connections like
 * the service's. Its tables live in a schema of their own, dropped at shutdown.
 */
const pgUrl = process.env.BARE_DATABASE_URL;
const pgSchema = `bare_floor_${randomUUID().slice(0, 8)}`;
const pool =
  pgUrl === undefined || pgUrl === '' ? null : new pg.Pool({ connectionString: pgUrl, max: 10, options: `-c search_path=${pgSchema}` });
if (pool !== null) {
  const admin = new pg.Client({ connectionString: pgUrl });
  await admin.connect();
  await admin.query(`create schema ${pgSchema}`);
  await admin.query(`create table ${pgSchema}.orders (id text primary key, document text not null, status text not null)`);
  await admin.query(`create table ${pgSchema}.events (id text primary key, order_id text not null, data text not null)`);
  await admin.query(`create table ${pgSchema}.calls (id text primary key, order_id text not null, data text not null)`);
  await admin.query(`create table ${pgSchema}.fills (id text primary key, order_id text not null, qty integer not null)`);
  await admin.end();
  app.post<{ Body: Body }>('/bare/pg-order', postSchema, async (request, reply) => {
    const document = received(request.body);
    const text = JSON.stringify(document);
    await pool.query({
      name: 'bare_order',
      text: 'with o as (insert into orders (id, document, status) values ($1, $2, $3)) insert into events (id, order_id, data) values ($4, $1, $2)',
      values: [document.id, text, 'created', randomUUID()],
    });
    await pool.query({ name: 'bare_handover', text: 'update orders set status = $2 where id = $1', values: [document.id, 'routed'] });
    reply.code(201);
    return document;
  });

  /**
   * The floor with the service's count of commits per sandbox order on PostgreSQL, and nothing else:
   * the order and its event; the partner's call journaled; the partner's answer (the order routed,
   * its event) before the answer; then, after it, the fill (the order filled, the fill, its event),
   * as the service's routing worker applies it. Each its own transaction, one statement each.
   */
  app.post<{ Body: Body }>('/bare/pg-order-commits', postSchema, async (request, reply) => {
    const document = received(request.body);
    const text = JSON.stringify(document);
    await pool.query({
      name: 'commits_order',
      text: 'with o as (insert into orders (id, document, status) values ($1, $2, $3)) insert into events (id, order_id, data) values ($4, $1, $2)',
      values: [document.id, text, 'created', randomUUID()],
    });
    await pool.query({
      name: 'commits_call',
      text: 'insert into calls (id, order_id, data) values ($1, $2, $3)',
      values: [randomUUID(), document.id, text],
    });
    await pool.query({
      name: 'commits_routed',
      text: 'with o as (update orders set status = $2 where id = $1) insert into events (id, order_id, data) values ($3, $1, $2)',
      values: [document.id, 'routed', randomUUID()],
    });
    void pool
      .query({
        name: 'commits_fill',
        text:
          'with o as (update orders set status = $2 where id = $1), f as (insert into fills (id, order_id, qty) values ($3, $1, 1)) ' +
          'insert into events (id, order_id, data) values ($4, $1, $2)',
        values: [document.id, 'filled', randomUUID(), randomUUID()],
      })
      .catch((error: unknown) => app.log.error(error));
    reply.code(201);
    return document;
  });
}

const address = await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? '0') });
process.stdout.write(`${JSON.stringify({ msg: 'bare server listening', address })}\n`);

const shutdown = () => {
  app.close().then(
    async () => {
      db.close();
      if (pool !== null) {
        await pool.query(`drop schema ${pgSchema} cascade`).catch(() => undefined);
        await pool.end();
      }
      process.exit(0);
    },
    () => process.exit(1),
  );
};
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);

/**
 * The reference server: a bare Fastify 5 app with the same framework defaults the service uses
 * (JSON schema validation with Ajv, response serialisation with fast-json-stringify) and nothing
 * else: no logging, no hooks, no database, no authentication, no rate limiting.
 *
 *   GET  /bare/json       a JSON page of about BARE_JSON_BYTES bytes (the size of the partners page)
 *   POST /bare/validated  validates a small JSON body against a schema, answers 201 with JSON
 *
 * Runs in its own process; prints {"address":"http://..."} on stdout once listening.
 */
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';

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
  },
} as const;

interface Body {
  subject_id: string;
  level: string;
  jurisdictions: string[];
  verifications: { type: string; verified_at: string; method?: string }[];
}

const app = Fastify({ logger: false });

app.get('/bare/json', { schema: { response: { 200: { type: 'object', properties: { data: { type: 'array', items: Item }, has_more: { type: 'boolean' } } } } } }, async () => PAGE);

app.post<{ Body: Body }>('/bare/validated', { schema: { body: ValidatedBody, response: { 201: Created } } }, async (request, reply) => {
  reply.code(201);
  return { id: randomUUID(), received_at: new Date().toISOString(), ...request.body };
});

const address = await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? '0') });
process.stdout.write(`${JSON.stringify({ msg: 'bare server listening', address })}\n`);

const shutdown = () => {
  app.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);

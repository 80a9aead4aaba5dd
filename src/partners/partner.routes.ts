import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Kysely } from 'kysely';
import { KeysetPaging, type CursorCodec } from '../http/cursor.js';
import { ErrorBody, PageQuery, QueryObject, StringEnum, pageHeaders } from '../http/schemas.js';
import type { Database } from '../storage/schema.js';
import { getInstrument, listCatalogue } from './instrument.service.js';
import { CapabilitySchema, ExchangeSchema, Instrument, JurisdictionSchema, SgiPartner } from './partner.schemas.js';
import { getDirectoryPartner, listDirectory } from './partner.service.js';

export interface DirectoryRouteDeps {
  db: Kysely<Database>;
  cursors: CursorCodec;
}

/** The public partner directory and instrument catalogue: no token needed. */
export const directoryRoutes: FastifyPluginAsyncTypebox<DirectoryRouteDeps> = async (app, { db, cursors }) => {
  app.get(
    '/v1/sgi/partners',
    {
      schema: {
        operationId: 'listPartners',
        tags: ['Partners'],
        summary: 'List approved SGI partners, ordered by id',
        querystring: QueryObject({
          ...PageQuery,
          jurisdiction: Type.Optional(JurisdictionSchema),
          capability: Type.Optional(CapabilitySchema),
        }),
        response: { 200: Type.Object({ data: Type.Array(SgiPartner) }, { headers: pageHeaders }), 422: ErrorBody, 429: ErrorBody },
      },
    },
    async (request, reply) => {
      const { cursor, limit, ...filters } = request.query;
      const paging = new KeysetPaging(cursors, 'partners', filters);
      const page = await listDirectory(db, { afterId: paging.after(cursor), limit, ...filters });
      return paging.send(reply, page.items, page.nextAfter);
    },
  );

  app.get(
    '/v1/sgi/partners/:id',
    {
      schema: {
        operationId: 'getPartner',
        tags: ['Partners'],
        summary: 'Read one approved SGI partner',
        params: Type.Object({ id: Type.String() }),
        response: { 200: SgiPartner, 404: ErrorBody, 429: ErrorBody },
      },
    },
    async (request) => getDirectoryPartner(db, request.params.id),
  );

  app.get(
    '/v1/instruments',
    {
      schema: {
        operationId: 'listInstruments',
        tags: ['Instruments'],
        summary: 'List the instrument catalogue, ordered by code',
        querystring: QueryObject({
          ...PageQuery,
          exchange: Type.Optional(ExchangeSchema),
          class: Type.Optional(CapabilitySchema),
          status: Type.Optional(StringEnum(['active', 'suspended'])),
        }),
        response: { 200: Type.Object({ data: Type.Array(Instrument) }, { headers: pageHeaders }), 422: ErrorBody, 429: ErrorBody },
      },
    },
    async (request, reply) => {
      const { cursor, limit, ...filters } = request.query;
      const paging = new KeysetPaging(cursors, 'instruments', filters);
      const page = await listCatalogue(db, { afterCode: paging.after(cursor), limit, ...filters });
      return paging.send(reply, page.items, page.nextAfter);
    },
  );

  app.get(
    '/v1/instruments/:code',
    {
      schema: {
        operationId: 'getInstrument',
        tags: ['Instruments'],
        summary: 'Read one instrument by code (TICKER.EXCHANGE)',
        params: Type.Object({ code: Type.String() }),
        response: { 200: Instrument, 404: ErrorBody, 429: ErrorBody },
      },
    },
    async (request) => getInstrument(db, request.params.code),
  );
};

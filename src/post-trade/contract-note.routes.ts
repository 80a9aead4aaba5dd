import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Kysely } from 'kysely';
import { authOf } from '../auth/authenticate.js';
import { StringEnum } from '../http/schemas.js';
import { bearerSecurity, protectedErrors } from '../http/schemas-auth.js';
import type { Database } from '../storage/schema.js';
import { ContractNote } from './contract-note.schemas.js';
import type { ContractNoteService } from './contract-note.service.js';
import { CONTRACT_NOTE_LANGUAGES } from './contract-note.texts.js';

export interface ContractNoteRouteDeps {
  db: Kysely<Database>;
  notes: ContractNoteService;
}

/**
 * Whether an Accept header asks for the PDF: `application/pdf` with a quality above zero, and above
 * JSON's (`application/json`, `application/*` or `*\/*`) when JSON is listed too. No header, or one
 * naming neither, gets JSON.
 */
export function prefersPdf(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  let pdf = 0;
  let json = 0;
  for (const part of accept.split(',')) {
    const [range = '', ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const quality = q === undefined ? 1 : Number(q.slice(2));
    if (!Number.isFinite(quality)) continue;
    const type = range.trim();
    if (type === 'application/pdf') pdf = Math.max(pdf, quality);
    else if (type === 'application/json') json = Math.max(json, quality);
    else if (type === 'application/*' || type === '*/*') json = Math.max(json, quality * 0.999);
  }
  return pdf > 0 && pdf > json;
}

export const contractNoteRoutes: FastifyPluginAsyncTypebox<ContractNoteRouteDeps> = async (app, { db, notes }) => {
  app.get(
    '/v1/orders/:id/contract-note',
    {
      config: { scope: 'orders:read' },
      schema: {
        operationId: 'getContractNote',
        tags: ['Orders'],
        summary: 'The trade confirmation of an order with fills: JSON, or a PDF with Accept: application/pdf',
        description:
          "The partner, the investor and their account, each fill with its fees, the fees by type, the net amount and the settlement date. `Accept: application/pdf` returns the same note as a PDF document, in French (avis d'opéré) for BRVM and BVMAC partners and in English for GSE partners unless `lang` names the language; its `Content-Language` says which. The JSON is the same in every language. 409 `conflict` while the order has no fill.",
        security: bearerSecurity,
        params: Type.Object({ id: Type.String() }),
        querystring: Type.Object(
          {
            lang: Type.Optional(
              StringEnum(CONTRACT_NOTE_LANGUAGES, {
                description:
                  "The PDF's language: `fr` or `en`. Without it, the partner's: French for BRVM and BVMAC partners, English for GSE partners. The JSON ignores it.",
              }),
            ),
          },
          { title: 'ContractNoteQuery', additionalProperties: false },
        ),
        response: {
          200: {
            description: 'The contract note',
            headers: {
              'content-language': Type.String({ description: 'With the PDF: its language, `fr` or `en`.' }),
              'content-disposition': Type.String({
                description: 'With the PDF: `inline`, with the file name `contract-note-<order id>.pdf`.',
              }),
            },
            content: {
              'application/json': { schema: ContractNote },
              'application/pdf': { schema: Type.String({ format: 'binary', description: 'The note as a PDF document (A4).' }) },
            },
          },
          ...protectedErrors(404, 409, 422),
        },
      },
    },
    async (request, reply) => {
      const note = await notes.note(db, authOf(request).clientId, request.params.id);
      reply.header('vary', 'Accept');
      if (!prefersPdf(request.headers.accept)) return reply.type('application/json; charset=utf-8').send(note);
      const { pdf, language } = await notes.pdf(note, request.query.lang);
      return (
        reply
          .type('application/pdf')
          .header('content-language', language)
          .header('content-disposition', `inline; filename="contract-note-${note.order_id}.pdf"`)
          // The PDF's bytes go out as they are: a Buffer is never serialised.
          .send(pdf as unknown as string)
      );
    },
  );
};

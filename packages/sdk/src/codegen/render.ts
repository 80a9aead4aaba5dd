import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';

/** Where the checked-in output lives, relative to the package folder. */
export const GENERATED_PATH = 'src/generated/openapi.ts';

const BANNER = `${COMMENT_HEADER.trimEnd()}
// Source: the service's own document (GET /v1/openapi.json). Regenerate with
// \`npm run generate -w @cauri/sdk\` after \`npx tsc -b\`; generated.test.ts fails while this file is stale.

`;

/**
 * The TypeScript types of an OpenAPI 3.1 document, as openapi-typescript renders them (`paths`,
 * `operations`, `components`). Deterministic for a given document and openapi-typescript version, so
 * the checked-in file can be compared byte for byte with a fresh rendering. openapi-typescript lints
 * the document first and prints what it finds (nothing: the service's document passes `redocly lint`).
 */
export async function renderOpenApiTypes(document: unknown): Promise<string> {
  // The document comes straight from the service's `app.swagger()`; openapi-typescript validates it.
  const ast = await openapiTS(document as Parameters<typeof openapiTS>[0], { alphabetize: false });
  return BANNER + astToString(ast);
}

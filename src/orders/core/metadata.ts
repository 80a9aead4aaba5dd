import type { ErrorDetail } from '../../lib/errors.js';

export const METADATA_MAX_BYTES = 8 * 1024;
export const METADATA_MAX_DEPTH = 5;

function depthOf(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + children.reduce<number>((max, child) => Math.max(max, depthOf(child)), 0);
}

/** client_metadata limits the schema cannot state: 8 KiB serialised and depth 5. */
export function checkMetadata(metadata: unknown): ErrorDetail[] {
  if (metadata === undefined) return [];
  const size = Buffer.byteLength(JSON.stringify(metadata));
  const details: ErrorDetail[] = [];
  if (size > METADATA_MAX_BYTES)
    details.push({
      field: 'client_metadata',
      rule: 'maxBytes',
      value: size,
      message: `client_metadata is ${size} bytes serialised; at most ${METADATA_MAX_BYTES}`,
    });
  const depth = depthOf(metadata);
  if (depth > METADATA_MAX_DEPTH)
    details.push({
      field: 'client_metadata',
      rule: 'maxDepth',
      value: depth,
      message: `client_metadata nests ${depth} levels; at most ${METADATA_MAX_DEPTH}`,
    });
  return details;
}

import { hash } from 'node:crypto';
import { encodeAuditLeaf, type AuditLeaf } from '@cauri/verifier';
import { isoMillis } from '../../lib/clock.js';
import type { OrderRow } from '../../orders/order.table.js';

export type LeafSource = Pick<
  OrderRow,
  'id' | 'rcpt_to' | 'kyc_attestation_id' | 'kyc_attestation_sha256' | 'instrument' | 'side' | 'qty' | 'limit_price_cents' | 'created_at'
>;

/** The leaf of an order (docs/audit.md); encoded and hashed by @cauri/verifier. */
export function orderLeaf(row: LeafSource): AuditLeaf {
  return {
    id: row.id,
    rcpt_to: row.rcpt_to,
    kyc_attestation_id: row.kyc_attestation_id,
    kyc_attestation_sha256: row.kyc_attestation_sha256,
    instrument: row.instrument,
    side: row.side,
    qty: row.qty,
    limit_price_cents: row.limit_price_cents,
    created_at: isoMillis(row.created_at),
  };
}

// Strings that RFC 8785 (§3.2.2.2) writes as themselves between quotes: printable ASCII without '"'
// and '\'. Every leaf string the service stores is such (ids, partner ids, instrument codes, hex).
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
const TWO = Array.from({ length: 60 }, (_, i) => String(i).padStart(2, '0'));
const THREE = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));
let dayPrefix = { start: NaN, text: '' };

/** isoMillis for the hot loop: the day's prefix is cached, the time of day formatted from tables. */
function fastIsoMillis(ms: number): string {
  let day = dayPrefix;
  let t = ms - day.start;
  if (!(t >= 0 && t < 86_400_000)) {
    const start = ms - (((ms % 86_400_000) + 86_400_000) % 86_400_000);
    day = dayPrefix = { start, text: new Date(start).toISOString().slice(0, 11) };
    t = ms - start;
  }
  const h = Math.floor(t / 3_600_000),
    m = Math.floor(t / 60_000) % 60,
    s = Math.floor(t / 1000) % 60;
  return `${day.text}${TWO[h]}:${TWO[m]}:${TWO[s]}.${THREE[t % 1000]}Z`;
}

/**
 * encodeAuditLeaf(orderLeaf(row)) for the snapshot build, where it is the cost that matters: a tenth
 * of the general RFC 8785 canonicaliser's (docs/performance.md, "Figures behind the code"). The members are written in RFC
 * 8785 order (§3.2.3: created_at, id, instrument, kyc_attestation_id, kyc_attestation_sha256,
 * limit_price_cents, qty, rcpt_to, side); integers print as ECMAScript does (§3.2.2.3). A row with any
 * string outside the plain set, or a number that is not a safe integer, takes the general path, so
 * the output is always exactly encodeAuditLeaf's (tested against it; the build also cross-checks
 * one leaf per page).
 */
export function encodeOrderLeaf(row: LeafSource): string {
  const { id, rcpt_to, kyc_attestation_id: attId, kyc_attestation_sha256: attSha, instrument, side, qty, limit_price_cents: limit } = row;
  if (
    !PLAIN.test(id) ||
    !PLAIN.test(rcpt_to) ||
    !PLAIN.test(attId) ||
    !PLAIN.test(attSha) ||
    !PLAIN.test(instrument) ||
    !PLAIN.test(side) ||
    !Number.isSafeInteger(qty) ||
    !(limit === null || Number.isSafeInteger(limit)) ||
    !Number.isSafeInteger(row.created_at)
  ) {
    return encodeAuditLeaf(orderLeaf(row));
  }
  return `{"created_at":"${fastIsoMillis(row.created_at)}","id":"${id}","instrument":"${instrument}","kyc_attestation_id":"${attId}","kyc_attestation_sha256":"${attSha}","limit_price_cents":${limit === null ? 'null' : limit},"qty":${qty},"rcpt_to":"${rcpt_to}","side":"${side}"}`;
}

/** RFC 9162 §2.1.1 leaf hash of leaf text: SHA-256(0x00 || UTF-8(text)), hashed in one call. */
export function leafHashOfText(text: string): Buffer {
  return hash('sha256', `\u0000${text}`, 'buffer');
}

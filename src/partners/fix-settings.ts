import { Type, type Static } from '@sinclair/typebox';
import type { ErrorDetail } from '../lib/errors.js';

/** The FIX version of every session (BeginString, 8). */
export const BEGIN_STRING = 'FIX.4.4';

/** `HH:MM:SS`, UTC. */
export const UTC_TIME_PATTERN = '^([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]$';

/**
 * The `fix` member of a partner in the import file: where the SGI's order gateway listens and the
 * FIX session's identity. Secrets are never here (`cauri partners credentials`).
 */
export const FixMember = Type.Object(
  {
    host: Type.String({
      minLength: 1,
      maxLength: 253,
      pattern: '^[A-Za-z0-9.:_-]+$',
      description: 'Host name or IP address of the order gateway.',
    }),
    port: Type.Integer({ minimum: 1, maximum: 65535 }),
    // CompIDs: printable ASCII without spaces, so they survive any FIX engine's configuration file.
    sender_comp_id: Type.String({ pattern: '^[\\x21-\\x7e]{1,64}$', description: 'SenderCompID (49) of this service.' }),
    target_comp_id: Type.String({ pattern: '^[\\x21-\\x7e]{1,64}$', description: 'TargetCompID (56): the SGI.' }),
    heartbeat_s: Type.Optional(Type.Integer({ minimum: 5, maximum: 300, description: 'HeartBtInt (108); default 30.' })),
    tls: Type.Optional(Type.Boolean({ description: 'TLS to the gateway; default true.' })),
    account: Type.Optional(
      Type.Union([Type.String({ pattern: '^[\\x20-\\x7e]{1,64}$' }), Type.Null()], {
        description:
          'Account (1) of an order whose subject has no account registered at this partner; default null (such an order then carries no Account).',
      }),
    ),
    start_time: Type.Optional(Type.String({ pattern: UTC_TIME_PATTERN, description: 'Daily session opening, UTC HH:MM:SS.' })),
    end_time: Type.Optional(Type.String({ pattern: UTC_TIME_PATTERN, description: 'Daily session close, UTC HH:MM:SS.' })),
  },
  { additionalProperties: false },
);
export type FixMember = Static<typeof FixMember>;

/** A partner's FIX session settings with every default applied (stored as JSON on the partner). */
export interface FixSettings {
  readonly host: string;
  readonly port: number;
  readonly sender_comp_id: string;
  readonly target_comp_id: string;
  readonly heartbeat_s: number;
  readonly tls: boolean;
  readonly account: string | null;
  readonly start_time: string | null;
  readonly end_time: string | null;
}

export function resolveFixSettings(member: FixMember): FixSettings {
  return {
    host: member.host,
    port: member.port,
    sender_comp_id: member.sender_comp_id,
    target_comp_id: member.target_comp_id,
    heartbeat_s: member.heartbeat_s ?? 30,
    tls: member.tls ?? true,
    account: member.account ?? null,
    start_time: member.start_time ?? null,
    end_time: member.end_time ?? null,
  };
}

/**
 * The checks on a `fix` member that its schema cannot express. `plaintextAllowed`: sandbox, or
 * production with CAURI_FIX_ALLOW_PLAINTEXT=true (the link is a VPN or a leased line).
 */
export function checkFixMember(member: FixMember, options: { connector: string; plaintextAllowed: boolean }): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  if (options.connector !== 'fix')
    details.push({ field: 'fix', rule: 'connector', value: options.connector, message: 'a fix member needs "connector": "fix"' });
  if ((member.start_time === undefined) !== (member.end_time === undefined)) {
    const missing = member.start_time === undefined ? 'start_time' : 'end_time';
    details.push({
      field: `fix.${missing}`,
      rule: 'required',
      value: null,
      message: 'start_time and end_time go together (omit both for a session that never closes)',
    });
  } else if (member.start_time !== undefined && member.start_time === member.end_time) {
    details.push({
      field: 'fix.end_time',
      rule: 'session_window',
      value: member.end_time,
      message: 'must differ from start_time (omit both for a session that never closes)',
    });
  }
  if (member.tls === false && !options.plaintextAllowed) {
    details.push({
      field: 'fix.tls',
      rule: 'tls',
      value: false,
      message: 'plaintext FIX is refused in production unless CAURI_FIX_ALLOW_PLAINTEXT=true',
    });
  }
  return details;
}

export function parseFixSettings(json: string): FixSettings {
  return JSON.parse(json) as FixSettings;
}

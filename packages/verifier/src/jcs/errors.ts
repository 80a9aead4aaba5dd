/** Why a value has no RFC 8785 canonical form. */
export type JcsErrorCode =
  | 'non_finite_number' // RFC 8785 §3.2.2.3: NaN and Infinity have no JSON form
  | 'lone_surrogate' //    RFC 8785 §3.1 requires I-JSON (RFC 7493 §2.1): valid Unicode only
  | 'unsupported_type' //  undefined, functions, symbols, bigint, non-plain objects
  | 'cycle';

export class JcsError extends TypeError {
  override readonly name = 'JcsError';
  constructor(
    readonly code: JcsErrorCode,
    message: string,
  ) {
    super(message);
  }
}

import { Type, type Static } from '@sinclair/typebox';
import { DateTime, PageQuery, QueryObject } from '../http/schemas.js';
import { SUBJECT_ID_PATTERN } from '../kyc/kyc.schemas.js';
import { ACCOUNT_NUMBER_MAX_LENGTH, ACCOUNT_NUMBER_PATTERN } from './core/account-number.js';

const SubjectId = Type.String({
  pattern: SUBJECT_ID_PATTERN,
  description: 'The subject, as in its attestations: 1 to 128 of [A-Za-z0-9._:-].',
});
const PartnerId = Type.String({ description: 'The SGI partner (`sgi_...`), as in `rcpt_to`.' });

export const SubjectParams = Type.Object({ subject_id: SubjectId });
export const AccountParams = Type.Object({ subject_id: SubjectId, partner_id: PartnerId });
export type AccountParams = Static<typeof AccountParams>;

export const AccountNumberRequest = Type.Object(
  {
    account_number: Type.String({
      minLength: 1,
      maxLength: ACCOUNT_NUMBER_MAX_LENGTH,
      pattern: ACCOUNT_NUMBER_PATTERN,
      description:
        "The investor's account number at the SGI, sent in Account (1) of FIX orders: 1 to 32 printable ASCII characters, no `|`, `=` or control character, no space at either end.",
      examples: ['CI-0042-7781'],
    }),
  },
  { additionalProperties: false, title: 'InvestorAccountRequest' },
);
export type AccountNumberRequest = Static<typeof AccountNumberRequest>;

export const InvestorAccount = Type.Object(
  {
    subject_id: Type.String(),
    partner_id: Type.String(),
    account_number: Type.String(),
    created_at: DateTime('When the account was first registered, with milliseconds'),
    updated_at: DateTime('When its number last changed, with milliseconds'),
  },
  { additionalProperties: false, title: 'InvestorAccount' },
);
export type InvestorAccount = Static<typeof InvestorAccount>;

export const AccountListQuery = QueryObject({ ...PageQuery });
export type AccountListQuery = Static<typeof AccountListQuery>;

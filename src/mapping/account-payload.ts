import type { CreateAccountInput, UpdateAccountInput } from '../api/types.js';
import type { AccountRecord, Address } from '../domain/records.js';
import { fingerprint } from './content-hash.js';

/** The client's input types: the mapping produces exactly what the API client sends. */
export type AccountCreateBody = CreateAccountInput & { source: { connectionId: string; sourceId: string } };
export type AccountUpdateBody = Required<
  Pick<UpdateAccountInput, 'fullName' | 'currencyCode' | 'billingAddress'>
>;

/** `POST /accounts`: the account and its `Custom` source, linked in the same request. */
export function accountCreateBody(
  record: AccountRecord,
  organizationId: string,
  connectionId: string,
): AccountCreateBody {
  return {
    organizationId,
    fullName: record.fullName,
    currencyCode: record.currencyCode,
    billingAddress: record.billingAddress,
    source: { connectionId, sourceId: record.sourceId },
  };
}

/** `PUT /accounts/{id}`: the fields a source owns. */
export function accountUpdateBody(record: AccountRecord): AccountUpdateBody {
  return {
    fullName: record.fullName,
    currencyCode: record.currencyCode,
    billingAddress: record.billingAddress,
  };
}

/** What decides "changed": the synced fields and the tags, not `updatedAt`. */
export function accountHash(record: AccountRecord): string {
  const a = record.billingAddress;
  return fingerprint([
    'account',
    record.sourceId,
    record.fullName,
    record.currencyCode,
    a?.street ?? null,
    a?.city ?? null,
    a?.postalCode ?? null,
    a?.country ?? null,
    [...record.tags].sort(),
    record.deleted ?? false,
  ]);
}

/** True when the remote account already holds these values (an adopted account needs no update). */
export function accountMatches(
  record: AccountRecord,
  remote: { fullName: string; currencyCode: string; billingAddress: Partial<Address> | null },
): boolean {
  const a = record.billingAddress;
  const b = remote.billingAddress ?? {};
  return (
    remote.fullName === record.fullName &&
    remote.currencyCode === record.currencyCode &&
    (b.street ?? null) === a.street &&
    (b.city ?? null) === a.city &&
    (b.postalCode ?? null) === a.postalCode &&
    (b.country ?? null) === a.country
  );
}

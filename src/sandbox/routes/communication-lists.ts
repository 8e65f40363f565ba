/**
 * The communication lists: one list of incoming and outgoing communications joined to account and
 * contact. Filter operators and the default order are sandbox choices (the spec shows only the
 * field names and the sort keys).
 */

import { compareStrings } from '../lists/filter-values.js';
import { foldText, type ListDefinition } from '../lists/index.js';
import type { Communication } from '../model.js';
import type { SandboxStore } from '../store.js';
import { CHOICE_OPERATORS, DATE_OPERATORS, NAME_OPERATORS } from './balance-query.js';

/** A communication joined to its account as it is now (renamed, or deleted). */
export interface JoinedCommunication {
  item: Communication;
  accountName: string;
  accountDeleted: boolean;
}

export const DIRECTIONS = ['Incoming', 'Outgoing'] as const;

/**
 * The current account name when the account exists; the name recorded on the communication
 * when it was deleted. A missing account counts as deleted even if `accountDeletedAt` was not set.
 */
export function joinCommunication(store: SandboxStore, item: Communication): JoinedCommunication {
  const account = store.accounts.get(item.accountId);
  return {
    item,
    accountName: account?.fullName ?? item.accountName,
    accountDeleted: item.accountDeletedAt !== null || account === undefined,
  };
}

const NULLABLE_TEXT_OPERATORS = [...NAME_OPERATORS, 'isEmpty', 'isNotEmpty'] as const;

/** Text order ignoring case and accents; a missing value sorts after every present one. */
const byText =
  (text: (row: JoinedCommunication) => string | null) => (a: JoinedCommunication, b: JoinedCommunication) => {
    const [x, y] = [text(a), text(b)];
    if (x === null || y === null) return x === y ? 0 : x === null ? 1 : -1;
    return compareStrings(foldText(x), foldText(y));
  };

const byCommunicationAt = (a: JoinedCommunication, b: JoinedCommunication): number =>
  Date.parse(a.item.communicationAt) - Date.parse(b.item.communicationAt) ||
  compareStrings(a.item.id, b.item.id);

/** The list definition of one communication endpoint (cursors are bound to `endpoint`). */
export function communicationList(endpoint: string): ListDefinition<JoinedCommunication> {
  return {
    endpoint,
    historical: false,
    filters: {
      direction: {
        kind: 'enum',
        operators: CHOICE_OPERATORS,
        enumValues: DIRECTIONS,
        value: (r) => r.item.direction,
      },
      status: { kind: 'text', operators: CHOICE_OPERATORS, value: (r) => r.item.status },
      deliveryStatus: {
        kind: 'text',
        operators: [...CHOICE_OPERATORS, 'isEmpty', 'isNotEmpty'],
        value: (r) => r.item.deliveryStatus,
      },
      accountName: { kind: 'text', operators: NAME_OPERATORS, value: (r) => r.accountName },
      contactName: { kind: 'text', operators: NULLABLE_TEXT_OPERATORS, value: (r) => r.item.contactName },
      subject: { kind: 'text', operators: NULLABLE_TEXT_OPERATORS, value: (r) => r.item.subject },
      date: { kind: 'date', operators: DATE_OPERATORS, value: (r) => r.item.communicationAt },
    },
    sorts: {
      communicationAt: byCommunicationAt,
      accountFullName: byText((r) => r.accountName),
      contactFullName: byText((r) => r.item.contactName),
      status: byText((r) => r.item.status),
    },
    // Oldest first unless sorted, so `sortOrder=desc` alone gives newest first.
    defaultOrder: byCommunicationAt,
  };
}

const fieldsOf = (row: JoinedCommunication) => ({
  id: row.item.id,
  organizationId: row.item.organizationId,
  accountId: row.item.accountId,
  accountName: row.accountName,
  contactId: row.item.contactId,
  contactName: row.item.contactName,
  direction: row.item.direction,
  channel: row.item.channel,
  status: row.item.status,
  deliveryStatus: row.item.deliveryStatus,
  subject: row.item.subject,
  communicationAt: row.item.communicationAt,
});

/** An item of `GET /communications`: the account's deletion as a datetime (null while it exists). */
export const communicationJson = (row: JoinedCommunication) => ({
  ...fieldsOf(row),
  accountDeletedAt: row.item.accountDeletedAt,
});

/** An item of an account- or channel-scoped list: the same fact as the boolean `accountDeleted`. */
export const scopedCommunicationJson = (row: JoinedCommunication) => ({
  ...fieldsOf(row),
  accountDeleted: row.accountDeleted,
});

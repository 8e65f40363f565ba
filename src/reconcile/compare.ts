import { compareDecimal, isDecimal } from '../domain/decimal.js';
import { RECORD_KINDS, type RecordKind } from '../domain/records.js';
import {
  type DocumentKind,
  DRIFT_CATEGORIES,
  type DriftCounts,
  type DriftItem,
  type FieldDiff,
  type MapEntry,
  type ServiceAccount,
  type ServiceDocument,
} from './types.js';

/**
 * The comparison of a reconciliation, as pure functions: the record map on one side, what the
 * service's lists returned on the other (docs/reconcile.md says which category wins when several fit).
 */

const ADDRESS_PARTS = ['street', 'city', 'postalCode', 'country'] as const;

/** The map's accounts the listing of linked accounts did not return: each needs a GET to tell why. */
export function accountsToCheck(entries: readonly MapEntry[], listed: readonly ServiceAccount[]): string[] {
  const ids = new Set(listed.map((a) => a.id));
  return entries.filter((e) => !isUnlinkedByUs(e) && !ids.has(e.apiId)).map((e) => e.apiId);
}

/** An account a source tombstone unlinked on purpose: not linked any more, as expected. */
const isUnlinkedByUs = (entry: MapEntry) => entry.syncedState.unlinked === true;

export interface CompareAccountsProps {
  connectionId: string;
  entries: readonly MapEntry[];
  /** The organization's linked accounts (`source:isNotEmpty`). */
  listed: readonly ServiceAccount[];
  /** The answers of the GETs of `accountsToCheck`: null where the account is gone (404). */
  checked: ReadonlyMap<string, ServiceAccount | null>;
}

/** Compares the map's accounts with the service's; orphans are the connection's accounts left over. */
export function compareAccounts(props: CompareAccountsProps): DriftItem[] {
  const { connectionId, entries } = props;
  const byId = new Map(props.listed.map((a) => [a.id, a]));
  const ours = new Map<string, ServiceAccount>();
  for (const a of props.listed) if (isOurs(a, connectionId)) ours.set(a.source!.sourceId, a);
  const items: DriftItem[] = [];
  const claimed = new Set(entries.map((e) => e.apiId));
  for (const entry of entries) {
    if (isUnlinkedByUs(entry)) continue;
    const base = { kind: 'account' as const, sourceKey: entry.sourceKey, apiId: entry.apiId };
    const remote = byId.get(entry.apiId) ?? props.checked.get(entry.apiId) ?? null;
    if (!remote) {
      const found = ours.get(entry.sourceKey);
      if (found && !claimed.has(found.id)) {
        claimed.add(found.id);
        items.push({ ...base, category: 'unresolved', foundId: found.id });
      } else items.push({ ...base, category: 'missing' });
      continue;
    }
    const held = heldBy(remote, connectionId, entry.sourceKey);
    const fields = accountFields(entry, remote);
    if (held)
      items.push({ ...base, category: 'readOnly', reason: held, ...(fields.length ? { fields } : {}) });
    else if (fields.length > 0) items.push({ ...base, category: 'changed', fields });
  }
  for (const [sourceId, account] of ours) {
    if (claimed.has(account.id)) continue;
    items.push({ category: 'orphan', kind: 'account', sourceKey: sourceId, foundId: account.id });
  }
  return items;
}

const isOurs = (a: ServiceAccount, connectionId: string) =>
  a.source !== null && a.source.connectionId === connectionId && a.source.connectorType === 'Custom';

/** Why no write of this source can change the account, or null when it can. */
function heldBy(remote: ServiceAccount, connectionId: string, sourceKey: string): string | null {
  const s = remote.source;
  if (!s) return 'unlinked on the service (no source): relink it there or sync it as a new account';
  if (s.connectorType !== 'Custom' || s.connectionId !== connectionId || s.sourceId !== sourceKey)
    return `linked to another source: ${s.connectorType} ${s.connectionId}/${s.sourceId}`;
  if (remote.readOnlyReason) return `read-only: ${remote.readOnlyReason}`;
  return null;
}

/** Name, currency and address as last written (the stored record, else the synced state's name). */
function accountFields(entry: MapEntry, remote: ServiceAccount): FieldDiff[] {
  const record = entry.record ?? {};
  const diffs: FieldDiff[] = [];
  const fullName = (record.fullName ?? entry.syncedState.fullName) as string | undefined;
  if (fullName !== undefined && fullName !== remote.fullName)
    diffs.push({ field: 'fullName', expected: fullName, actual: remote.fullName });
  if (typeof record.currencyCode === 'string' && record.currencyCode !== remote.currencyCode)
    diffs.push({ field: 'currencyCode', expected: record.currencyCode, actual: remote.currencyCode });
  const address = record.billingAddress as Record<string, string | null> | undefined;
  if (address) {
    for (const part of ADDRESS_PARTS) {
      const expected = address[part] ?? null;
      const actual = remote.billingAddress?.[part] ?? null;
      if (expected !== actual) diffs.push({ field: `billingAddress.${part}`, expected, actual });
    }
  }
  return diffs;
}

export interface CompareDocumentsProps {
  kind: DocumentKind;
  entries: readonly MapEntry[];
  /** The organization's documents of the kind carrying a `sourceId` (`sourceId:isNotEmpty`). */
  listed: readonly ServiceDocument[];
  /** The API ids of the accounts linked to this connection: their unknown documents are orphans. */
  ourAccountIds: ReadonlySet<string>;
}

/** Compares the map's documents of one kind with the service's. */
export function compareDocuments(props: CompareDocumentsProps): DriftItem[] {
  const { kind, entries } = props;
  const byId = new Map(props.listed.map((d) => [d.id, d]));
  const bySourceId = new Map<string, ServiceDocument>();
  for (const d of props.listed) if (d.sourceId !== null) bySourceId.set(d.sourceId, d);
  const claimed = new Set(entries.map((e) => e.apiId));
  const keys = new Set(entries.map((e) => e.sourceKey));
  const items: DriftItem[] = [];
  for (const entry of entries) {
    const base = { kind, sourceKey: entry.sourceKey, apiId: entry.apiId };
    const remote = byId.get(entry.apiId);
    if (!remote) {
      const found = bySourceId.get(entry.sourceKey);
      if (found && !claimed.has(found.id)) {
        claimed.add(found.id);
        items.push({ ...base, category: 'unresolved', foundId: found.id });
      } else items.push({ ...base, category: 'missing' });
      continue;
    }
    const fields = documentFields(kind, entry, remote);
    if (remote.readOnlyReason)
      items.push({
        ...base,
        category: 'readOnly',
        reason: `read-only: ${remote.readOnlyReason}`,
        ...(fields.length ? { fields } : {}),
      });
    else if (fields.length > 0) items.push({ ...base, category: 'changed', fields });
  }
  for (const doc of props.listed) {
    if (doc.sourceId === null || claimed.has(doc.id) || keys.has(doc.sourceId)) continue;
    if (!props.ourAccountIds.has(doc.accountId)) continue;
    items.push({ category: 'orphan', kind, sourceKey: doc.sourceId, foundId: doc.id });
  }
  return items;
}

/**
 * The fields of a document that differ from what was last written: the paid amount and due date
 * as the synced state holds them (what the last write set), the number, dates and amounts as the
 * stored record holds them (frozen at creation).
 */
function documentFields(kind: DocumentKind, entry: MapEntry, remote: ServiceDocument): FieldDiff[] {
  const diffs: FieldDiff[] = [];
  const record = entry.record ?? {};
  const state = entry.syncedState;
  const frozen = (field: string, expected: unknown, actual: unknown) => {
    if (expected !== undefined && !sameValue(expected, actual))
      diffs.push({ field, expected, actual, frozen: true });
  };
  frozen('number', record.number, remote.number);
  frozen('issuedDate', record.issuedDate, remote.issuedDate);
  frozen('totalAmount', record.totalAmount, remote.totalAmount);
  frozen('taxAmount', record.taxAmount, remote.taxAmount);
  if (kind === 'invoice') {
    const paid = state.paidAmount;
    if (typeof paid === 'string' && !sameValue(paid, remote.paidAmount ?? '0'))
      diffs.push({ field: 'paidAmount', expected: paid, actual: remote.paidAmount });
    const due = state.dueDate ?? record.dueDate;
    if (due && !sameValue(due, remote.dueDate))
      diffs.push({ field: 'dueDate', expected: due, actual: remote.dueDate });
  }
  return diffs;
}

/** Decimals by value, dates by their parts, anything else as it is. */
function sameValue(a: unknown, b: unknown): boolean {
  if (typeof a === 'string' && typeof b === 'string' && isDecimal(a) && isDecimal(b))
    return compareDecimal(a, b) === 0;
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const x = a as Record<string, unknown>;
    const y = b as Record<string, unknown>;
    return x.year === y.year && x.month === y.month && x.day === y.day;
  }
  return a === b;
}

/** category -> kind -> count, every category and kind present. */
export function countDrift(items: readonly DriftItem[]): DriftCounts {
  const counts = Object.fromEntries(
    DRIFT_CATEGORIES.map((c) => [c, Object.fromEntries(RECORD_KINDS.map((k) => [k, 0]))]),
  ) as DriftCounts;
  for (const item of items) counts[item.category][item.kind as RecordKind]++;
  return counts;
}

/**
 * The items that are drift: all but those held and already recorded as failures (read-only, frozen
 * fields, orphans nothing may remove): no write of this tool can fix those; `failures` lists them.
 */
export const driftOf = (items: readonly DriftItem[]): DriftItem[] => items.filter((i) => !i.acknowledged);

/**
 * Aging arithmetic of the balance endpoints: open amounts by aging bucket, credit notes applied
 * oldest bucket first. Remaining amounts and dates come from resources/derived.ts so that every
 * endpoint tells the same story. Amounts are bigint scaled units, never floats.
 */

import { type Decimal, formatDecimal } from '../../domain/decimal.js';
import { compareStrings } from '../lists/filter-values.js';
import { foldText } from '../lists/index.js';
import type { Account, DocumentRecord } from '../model.js';
import { dayKey, daysBetween, documentsByAccount, remainingUnits, todayKey } from '../resources/derived.js';
import type { SandboxStore } from '../store.js';

/** Aging buckets, youngest first; the bucket layout is a sandbox choice (the spec does not show it). */
export const BUCKETS = ['notDue', 'days1To30', 'days31To60', 'days61To90', 'over90'] as const;
export type BucketName = (typeof BUCKETS)[number];
export type Buckets = Record<BucketName, Decimal>;

/** The aging of open amounts after credit notes were applied, plus the credit left over. */
export interface Aging {
  buckets: Buckets;
  unallocatedCredit: Decimal;
}

/**
 * Whole days an invoice is past its due date on `today` (UTC day of the sandbox clock); zero or
 * negative = not due yet (due today is not overdue). An invoice without a due date is never due.
 */
export const daysPastDue = (doc: DocumentRecord, today: Date): number =>
  doc.dueDate === null ? 0 : daysBetween(dayKey(doc.dueDate), todayKey(today));

export function bucketOf(days: number): BucketName {
  if (days <= 0) return 'notDue';
  if (days <= 30) return 'days1To30';
  if (days <= 60) return 'days31To60';
  if (days <= 90) return 'days61To90';
  return 'over90';
}

export const emptyBuckets = (): Buckets => ({
  notDue: 0n,
  days1To30: 0n,
  days31To60: 0n,
  days61To90: 0n,
  over90: 0n,
});

/**
 * The aging of one account's documents: open invoice amounts by bucket, then the unallocated
 * credit of its credit notes taken from the oldest bucket first (over90, then 61-90, ... notDue).
 * Credit left after every bucket is empty is reported as `unallocatedCredit`.
 */
export function agingOf(docs: readonly DocumentRecord[], today: Date): Aging {
  const buckets = emptyBuckets();
  let credit = 0n;
  for (const doc of docs) {
    if (doc.kind === 'creditNote') credit += remainingUnits(doc);
    else buckets[bucketOf(daysPastDue(doc, today))] += remainingUnits(doc);
  }
  for (const name of [...BUCKETS].reverse()) {
    const taken = credit < buckets[name] ? credit : buckets[name];
    buckets[name] -= taken;
    credit -= taken;
  }
  return { buckets, unallocatedCredit: credit };
}

export function addAging(into: Aging, more: Aging): void {
  for (const name of BUCKETS) into.buckets[name] += more.buckets[name];
  into.unallocatedCredit += more.unallocatedCredit;
}

/** Net outstanding: what the buckets still hold minus the credit nothing could absorb. */
export function netOf(aging: Aging): Decimal {
  return BUCKETS.reduce((sum, name) => sum + aging.buckets[name], 0n) - aging.unallocatedCredit;
}

export interface AgingJson {
  buckets: Record<BucketName, string>;
  unallocatedCredit: string;
  total: string;
}

export function agingJson(aging: Aging): AgingJson {
  const buckets = Object.fromEntries(
    BUCKETS.map((name) => [name, formatDecimal(aging.buckets[name])]),
  ) as Record<BucketName, string>;
  return {
    buckets,
    unallocatedCredit: formatDecimal(aging.unallocatedCredit),
    total: formatDecimal(netOf(aging)),
  };
}

/** One account's aging, the unit every balance list is built from (so they always agree). */
export interface AgingRow {
  account: Account;
  aging: Aging;
}

/** The aging of every account of the organization, as of the sandbox clock's today. */
export function agingRows(store: SandboxStore, organizationId: string): AgingRow[] {
  const today = store.clock.now();
  const docs = documentsByAccount(store);
  return [...store.accounts.values()]
    .filter((account) => account.organizationId === organizationId)
    .map((account) => ({ account, aging: agingOf(docs.get(account.id) ?? [], today) }));
}

/** Account name ignoring case and accents, then id so the order is total. */
export const agingRowsByName = (a: AgingRow, b: AgingRow): number =>
  compareStrings(foldText(a.account.fullName), foldText(b.account.fullName)) ||
  compareStrings(a.account.id, b.account.id);

export const agingRowsByAmount =
  (amount: (row: AgingRow) => Decimal) =>
  (a: AgingRow, b: AgingRow): number => {
    const d = amount(a) - amount(b);
    return d < 0n ? -1 : d > 0n ? 1 : 0;
  };

/** How an account is rendered as JSON by the Public API (single resource and list items). */

import type { Account, Address, SourceRef, Tag } from '../model.js';
import type { SandboxStore } from '../store.js';
import { type AccountBalances, accountBalances } from './derived.js';

/** A tag as embedded in accounts and documents. */
export interface TagJson {
  id: string;
  name: string;
  kind: Tag['kind'];
}

export interface AccountJson extends AccountBalances {
  id: string;
  organizationId: string;
  fullName: string;
  currencyCode: string;
  billingAddress: Address;
  source: SourceRef | null;
  lastUnlinkedSource: SourceRef | null;
  readOnlyReason: string | null;
  tags: TagJson[];
  dunningPaused: boolean;
  paymentMethod: string | null;
  collectiveProceeding: Account['collectiveProceeding'];
  hasPaymentSchedule: boolean;
  createdAt: string;
  updatedAt: string;
}

/** The tags of a record, in attachment order; ids of tags deleted since are skipped. */
export function tagsJson(store: SandboxStore, tagIds: readonly string[]): TagJson[] {
  return tagIds.flatMap((id) => {
    const tag = store.tags.get(id);
    return tag ? [{ id: tag.id, name: tag.name, kind: tag.kind }] : [];
  });
}

/** Ids and names of a record's tags: what the `tags` filters compare with. */
export function tagKeys(store: SandboxStore, tagIds: readonly string[]): string[] {
  return tagsJson(store, tagIds).flatMap((tag) => [tag.id, tag.name]);
}

/** The account as the API returns it; `balances` may be given when already computed (lists). */
export function accountJson(
  store: SandboxStore,
  account: Account,
  balances: AccountBalances = accountBalances(store, account.id, store.clock.now()),
): AccountJson {
  return {
    id: account.id,
    organizationId: account.organizationId,
    fullName: account.fullName,
    currencyCode: account.currencyCode,
    billingAddress: { ...account.billingAddress },
    source: account.source ? { ...account.source } : null,
    lastUnlinkedSource: account.lastUnlinkedSource ? { ...account.lastUnlinkedSource } : null,
    readOnlyReason: account.readOnlyReason,
    tags: tagsJson(store, account.tagIds),
    dunningPaused: account.dunningPaused,
    paymentMethod: account.paymentMethod,
    collectiveProceeding: account.collectiveProceeding,
    hasPaymentSchedule: account.hasPaymentSchedule,
    ...balances,
    createdAt: account.createdAt,
    updatedAt: account.updatedAt,
  };
}

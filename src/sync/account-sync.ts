import type { AccountRecord, RecordOrigin } from '../domain/records.js';
import {
  accountCreateBody,
  accountHash,
  accountMatches,
  accountUpdateBody,
} from '../mapping/account-payload.js';
import { contentHash } from '../mapping/content-hash.js';
import type { MappedRecord } from '../state/record-map.js';
import type { RemoteAccount } from './api-port.js';
import { chunks, diffBatch, processBatchOf, type SyncContext, withPendingWrite } from './context.js';
import { fail, type Outcome } from './outcome.js';
import type { TagResolver } from './tag-resolver.js';

/** The API accepts at most 50 values in one filter condition. */
export const LOOKUP_BATCH = 50;

interface Item {
  record: AccountRecord;
  origin: RecordOrigin;
}

/** What the state keeps of a synced account, besides its hash. */
interface AccountState {
  fullName: string;
  tags: string[];
  unlinked?: boolean;
}

/**
 * Syncs a batch of accounts: unchanged ones cost nothing; ones the state does not know are looked
 * up by their source (so a fresh state DB adopts instead of duplicating), then created with their
 * source in one request; changed ones are updated and their source's `lastUpdate` set.
 */
export async function syncAccounts(
  ctx: SyncContext,
  tags: TagResolver,
  items: readonly Item[],
): Promise<void> {
  const plan = await diffBatch(ctx, 'account', items, accountHash);
  const remote = await lookupAccounts(ctx, plan.unknown);
  await processBatchOf(
    ctx,
    'account',
    plan,
    ({ record }) => syncOne(ctx, tags, record, plan.known.get(record.sourceId), remote.get(record.sourceId)),
    'account',
  );
}

/** Accounts of this connection found by their source ids, in batches of 50 (`source:isAnyOf`). */
export async function lookupAccounts(
  ctx: SyncContext,
  sourceIds: readonly string[],
): Promise<Map<string, RemoteAccount>> {
  const found = new Map<string, RemoteAccount>();
  for (const batch of chunks([...new Set(sourceIds)], LOOKUP_BATCH)) {
    for (const account of await ctx.api.findAccountsBySourceIds(batch)) {
      if (account.source?.connectionId === ctx.connectionId) found.set(account.source.sourceId, account);
    }
  }
  return found;
}

async function syncOne(
  ctx: SyncContext,
  tags: TagResolver,
  record: AccountRecord,
  mapped: MappedRecord | undefined,
  remote: RemoteAccount | undefined,
): Promise<Outcome> {
  // Unchanged records never get here: diffBatch counts them without any work.
  if (record.deleted) return unlink(ctx, record, mapped ?? (remote && { apiId: remote.id }));
  if (mapped)
    return update(ctx, tags, record, mapped.apiId, (mapped.syncedState as Partial<AccountState>).tags ?? []);
  if (remote) return adopt(ctx, tags, record, remote);
  return create(ctx, tags, record);
}

async function create(ctx: SyncContext, tags: TagResolver, record: AccountRecord): Promise<Outcome> {
  const body = accountCreateBody(record, ctx.api.organizationId, ctx.connectionId);
  if (ctx.dryRun) return plan(ctx, record, 'create', 'created');
  let account: RemoteAccount;
  try {
    account = await withPendingWrite(
      ctx,
      { kind: 'account', sourceKey: record.sourceId, operation: 'create' },
      contentHash(body),
      (k) => ctx.api.createAccount(body, { idempotencyKey: k }),
    );
  } catch (error) {
    // A 400 may mean the source is already linked (created by an earlier, interrupted run): look it up.
    const existing = (await lookupAccounts(ctx, [record.sourceId])).get(record.sourceId);
    if (!existing) throw error;
    return adopt(ctx, tags, record, existing);
  }
  await applyTags(ctx, tags, account.id, record, []);
  await save(ctx, record, account.id);
  return 'created';
}

async function adopt(
  ctx: SyncContext,
  tags: TagResolver,
  record: AccountRecord,
  remote: RemoteAccount,
): Promise<Outcome> {
  if (accountMatches(record, remote) && record.tags.length === 0) {
    if (!ctx.dryRun) await save(ctx, record, remote.id);
    return 'unchanged';
  }
  return update(ctx, tags, record, remote.id, []);
}

async function update(
  ctx: SyncContext,
  tags: TagResolver,
  record: AccountRecord,
  accountId: string,
  previousTags: readonly string[],
): Promise<Outcome> {
  if (ctx.dryRun) return plan(ctx, record, 'update', 'updated');
  const body = accountUpdateBody(record);
  const updated = await withPendingWrite(
    ctx,
    { kind: 'account', sourceKey: record.sourceId, operation: 'update' },
    contentHash(body),
    (k) => ctx.api.updateAccount(accountId, body, { idempotencyKey: k }),
  );
  if (updated.source?.connectionId !== ctx.connectionId || updated.source.sourceId !== record.sourceId) {
    const linked = updated.source
      ? `${updated.source.connectorType} ${updated.source.connectionId}/${updated.source.sourceId}`
      : 'no source';
    throw fail(
      'update',
      `account ${accountId} is linked to another source (${linked}); relink or unlink it first`,
    );
  }
  const lastUpdate = record.updatedAt ?? ctx.now().toISOString();
  await withPendingWrite(
    ctx,
    { kind: 'account', sourceKey: record.sourceId, operation: 'touchSource' },
    contentHash(lastUpdate),
    (k) => ctx.api.touchAccountSource(accountId, lastUpdate, { idempotencyKey: k }),
  );
  await applyTags(ctx, tags, accountId, record, previousTags);
  await save(ctx, record, accountId);
  return 'updated';
}

async function unlink(
  ctx: SyncContext,
  record: AccountRecord,
  mapped: { apiId: string } | undefined,
): Promise<Outcome> {
  if (!mapped) return 'unchanged';
  if (ctx.dryRun) return plan(ctx, record, 'unlink source', 'updated');
  await ctx.api.unlinkAccountSource(mapped.apiId);
  await ctx.recordMap.save(
    ctx.sourceId,
    'account',
    {
      sourceKey: record.sourceId,
      apiId: mapped.apiId,
      contentHash: accountHash(record),
      syncedState: { unlinked: true },
    },
    ctx.runId,
  );
  return 'updated';
}

/** Attaches the row's tags that were not attached before and detaches the ones it dropped. */
async function applyTags(
  ctx: SyncContext,
  tags: TagResolver,
  accountId: string,
  record: AccountRecord,
  previous: readonly string[],
): Promise<void> {
  const wanted = new Set(record.tags.map((t) => t.toLowerCase()));
  const before = new Set(previous.map((t) => t.toLowerCase()));
  const added = record.tags.filter((t) => !before.has(t.toLowerCase()));
  const removed = previous.filter((t) => !wanted.has(t.toLowerCase()));
  if (added.length > 0) {
    const ids = await tags.idsFor(added);
    await withPendingWrite(
      ctx,
      { kind: 'account', sourceKey: record.sourceId, operation: 'attachTags' },
      contentHash(ids),
      (k) => ctx.api.attachTags(accountId, ids, { idempotencyKey: k }),
    );
  }
  for (const id of await tags.idsFor(removed)) await ctx.api.detachTag(accountId, id);
}

async function save(ctx: SyncContext, record: AccountRecord, apiId: string): Promise<void> {
  const state: AccountState = { fullName: record.fullName, tags: record.tags };
  await ctx.recordMap.save(
    ctx.sourceId,
    'account',
    {
      sourceKey: record.sourceId,
      apiId,
      contentHash: accountHash(record),
      syncedState: { ...state },
      record,
    },
    ctx.runId,
  );
}

function plan(ctx: SyncContext, record: AccountRecord, operation: string, outcome: Outcome): Outcome {
  ctx.plan.push({ kind: 'account', sourceKey: record.sourceId, operation, detail: record.fullName });
  return outcome;
}

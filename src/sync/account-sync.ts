import { errorKindOf } from '../domain/errors.js';
import type { AccountRecord, RecordOrigin } from '../domain/records.js';
import type { MappedRecord } from '../domain/sync-state.js';
import {
  accountCreateBody,
  accountHash,
  accountMatches,
  accountUpdateBody,
} from '../mapping/account-payload.js';
import { contentHash } from '../mapping/content-hash.js';
import { diffBatch } from './batch-diff.js';
import { processBatchOf } from './batch-execution.js';
import { BatchRemotes } from './lookup-switch.js';
import { fail, type Outcome } from './outcome.js';
import type { PassBookkeeping, PassIdentity, PassPorts, PassScope } from './pass-scope.js';
import { withPendingWrite } from './pending-write.js';
import type { RemoteAccount } from './ports.js';
import { lookupAccounts, recoverAccounts } from './remote-lookup.js';
import type { TagResolver } from './tag-resolver.js';

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
 * Syncs a batch of accounts: unchanged ones cost nothing; ones the state does not know are created
 * with their source in one request (a source already linked is looked up and adopted: see
 * LookupSwitch for when they are looked up first instead); changed ones are updated and their
 * source's `lastUpdate` set.
 */
export async function syncAccounts(ctx: PassScope, tags: TagResolver, items: readonly Item[]): Promise<void> {
  const plan = await diffBatch(ctx, 'account', items, accountHash);
  const remote = await BatchRemotes.prepare({
    unknown: plan.unknown,
    // A deleted account is unlinked on the service: only a lookup finds it there.
    alwaysLookUp: plan.work.filter((i) => i.record.deleted).map((i) => i.record.sourceId),
    modes: ctx.lookups,
    find: (keys) => lookupAccounts(ctx, keys),
  });
  await processBatchOf(
    ctx,
    'account',
    plan,
    ({ record }) => {
      const mapped = plan.known.get(record.sourceId);
      if (mapped || record.deleted) return syncOne(ctx, tags, record, mapped, remote);
      return ctx.lookups.firstAlone(() => syncOne(ctx, tags, record, undefined, remote));
    },
    'account',
  );
}

async function syncOne(
  ctx: PassScope,
  tags: TagResolver,
  record: AccountRecord,
  mapped: MappedRecord | undefined,
  remotes: BatchRemotes<RemoteAccount>,
): Promise<Outcome> {
  // Unchanged records never get here: diffBatch counts them without any work.
  const remote = mapped ? undefined : await remotes.get(record.sourceId);
  if (record.deleted) return unlink(ctx, record, mapped ?? (remote && { apiId: remote.id }));
  if (mapped) {
    const state = mapped.syncedState as Partial<AccountState>;
    if (state.unlinked) return relink(ctx, tags, record, mapped.apiId);
    return update(ctx, tags, record, mapped.apiId, state.tags ?? []);
  }
  if (remote) return adopt(ctx, tags, record, remote);
  return create(ctx, tags, record);
}

async function create(ctx: PassScope, tags: TagResolver, record: AccountRecord): Promise<Outcome> {
  const body = accountCreateBody(record, ctx.api.organizationId, ctx.connectionId);
  if (ctx.dryRun) return plan(ctx, record, 'create', 'created');
  let account: RemoteAccount;
  try {
    // The API id is stored with the create's completion, before any follow-up: a crash after it
    // leaves a known account whose tags the next pass attaches (its fingerprint says "compare again").
    account = await withPendingWrite(
      ctx,
      { kind: 'account', sourceKey: record.sourceId, operation: 'create' },
      contentHash(body),
      (k) => ctx.api.createAccount(body, { idempotencyKey: k }),
      (created, key) =>
        save(ctx, record, created.id, {
          attachedTags: [],
          complete: record.tags.length === 0,
          completing: key,
        }),
    );
  } catch (error) {
    if (errorKindOf(error) !== 'data') throw error;
    // A 400 may mean the source is already linked (created by an earlier, interrupted run): look it up.
    const existing = (await recoverAccounts(ctx, [record.sourceId])).get(record.sourceId);
    if (!existing) throw error;
    ctx.lookups.metExisting('account', record.sourceId);
    return adopt(ctx, tags, record, existing);
  }
  if (record.tags.length > 0) {
    await applyTags(ctx, tags, account.id, record, []);
    await save(ctx, record, account.id);
  }
  return 'created';
}

async function adopt(
  ctx: PassIdentity & PassPorts & PassBookkeeping,
  tags: TagResolver,
  record: AccountRecord,
  remote: RemoteAccount,
): Promise<Outcome> {
  // Writes of this record may be pending (sent, answered, then the process died): a create is moot
  // now, and what is still needed is sent again below from what the service holds.
  if (!ctx.dryRun)
    await ctx.state.pending.forget({
      sourceId: ctx.sourceId,
      kind: 'account',
      sourceKey: record.sourceId,
    });
  if (accountMatches(record, remote) && record.tags.length === 0) {
    if (!ctx.dryRun) await save(ctx, record, remote.id);
    return 'unchanged';
  }
  return update(ctx, tags, record, remote.id, []);
}

async function update(
  ctx: PassIdentity & PassPorts & PassBookkeeping,
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
  const lastUpdate = record.updatedAt ?? ctx.clock.now().toISOString();
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
  ctx: PassIdentity & PassPorts & PassBookkeeping,
  record: AccountRecord,
  mapped: { apiId: string } | undefined,
): Promise<Outcome> {
  if (!mapped) return 'unchanged';
  if (ctx.dryRun) return plan(ctx, record, 'unlink source', 'updated');
  await ctx.api.unlinkAccountSource(mapped.apiId);
  await ctx.state.recordMap.save(
    ctx.sourceId,
    'account',
    {
      sourceKey: record.sourceId,
      apiId: mapped.apiId,
      contentHash: accountHash(record),
      syncedState: { unlinked: true },
      // The tombstone, so a row that comes back is compared with it (not with the row before it).
      record,
    },
    ctx.runId,
  );
  return 'updated';
}

/**
 * A row that comes back after its account was unlinked (a tombstone, or a snapshot file that lacked
 * it): its source is linked again (`PUT …/source`), then the account is updated as any changed one.
 * An account linked to another source meanwhile refuses the link: a failure of the row.
 */
async function relink(
  ctx: PassIdentity & PassPorts & PassBookkeeping,
  tags: TagResolver,
  record: AccountRecord,
  accountId: string,
): Promise<Outcome> {
  if (ctx.dryRun) return plan(ctx, record, 'relink source', 'updated');
  const link = {
    connectionId: ctx.connectionId,
    sourceId: record.sourceId,
    lastUpdate: record.updatedAt ?? ctx.clock.now().toISOString(),
  };
  await withPendingWrite(
    ctx,
    { kind: 'account', sourceKey: record.sourceId, operation: 'linkSource' },
    contentHash(link),
    (k) => ctx.api.linkAccountSource(accountId, link, { idempotencyKey: k }),
  );
  // Tags attached before the unlink are not known any more: the row's are attached again.
  return update(ctx, tags, record, accountId, []);
}

/** Attaches the row's tags that were not attached before and detaches the ones it dropped. */
async function applyTags(
  ctx: PassIdentity & PassPorts,
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

/**
 * Stores the account as synced. `complete: false`: follow-ups (its tags) are still to come, so the
 * fingerprint is left empty (the next pass compares it again) and `attachedTags` says what is
 * attached so far; `completing`: the create's pending write, finished in the same transaction.
 */
async function save(
  ctx: PassIdentity & PassPorts,
  record: AccountRecord,
  apiId: string,
  options: { attachedTags?: string[]; complete?: boolean; completing?: string } = {},
): Promise<void> {
  const state: AccountState = { fullName: record.fullName, tags: options.attachedTags ?? record.tags };
  await ctx.state.recordMap.save(
    ctx.sourceId,
    'account',
    {
      sourceKey: record.sourceId,
      apiId,
      contentHash: (options.complete ?? true) ? accountHash(record) : '',
      syncedState: { ...state },
      record,
    },
    ctx.runId,
    options.completing === undefined ? {} : { completing: options.completing },
  );
}

function plan(ctx: PassBookkeeping, record: AccountRecord, operation: string, outcome: Outcome): Outcome {
  return ctx.report.planned(
    { kind: 'account', sourceKey: record.sourceId, operation, detail: record.fullName },
    outcome,
  );
}

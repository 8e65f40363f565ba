import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { compareDecimal } from '../domain/decimal.js';
import { errorKindOf } from '../domain/errors.js';
import { kindNoun, type RecordOrigin } from '../domain/records.js';
import type { MappedRecord } from '../domain/sync-state.js';
import { contentHash } from '../mapping/content-hash.js';
import {
  type DocumentMutableState,
  type DocumentRecord,
  documentCreateInput,
  documentHash,
  documentPatch,
  immutableHash,
  mutableState,
} from '../mapping/document-payload.js';
import { renderDocumentPdf } from '../mapping/render-pdf.js';
import { diffBatch } from './batch-diff.js';
import { processBatchOf } from './batch-execution.js';
import { BatchRemotes } from './lookup-switch.js';
import { fail, type Outcome } from './outcome.js';
import type { PassBookkeeping, PassIdentity, PassPorts, PassScope } from './pass-scope.js';
import { withPendingWrite } from './pending-write.js';
import type { PdfFile, RemoteDocument } from './ports.js';
import { lookupDocuments, recoverAccounts } from './remote-lookup.js';

interface Item {
  record: DocumentRecord;
  origin: RecordOrigin;
}

interface DocumentState extends DocumentMutableState {
  frozen: string;
}

interface Owner {
  apiId: string;
  fullName: string;
}

/**
 * Syncs a batch of invoices or credit notes, keyed by `sourceId`: documents wait for their account
 * (and fail with its reason when it failed), unknown ones are created (a duplicate-source-id answer
 * becomes a lookup and an adoption; see LookupSwitch for when they are looked up in batches of 50
 * first instead), and paid amount / due date changes go through the document PATCH.
 */
export async function syncDocuments(
  ctx: PassScope,
  kind: DocumentRecord['kind'],
  items: readonly Item[],
): Promise<void> {
  const plan = await diffBatch(ctx, kind, items, documentHash);
  const owners = await resolveOwners(
    ctx,
    plan.work.map((i) => i.record.accountSourceId),
  );
  const remote = await BatchRemotes.prepare({
    unknown: plan.unknown,
    // A document whose account is not available cannot be created: only a lookup can adopt it.
    alwaysLookUp: plan.work
      .filter((i) => typeof owners.get(i.record.accountSourceId) !== 'object')
      .map((i) => i.record.sourceId),
    modes: ctx.lookups,
    find: (keys) => lookupDocuments(ctx, kind, keys),
  });
  await processBatchOf(
    ctx,
    kind,
    plan,
    ({ record }) => {
      const mapped = plan.known.get(record.sourceId);
      if (mapped) return syncOne(ctx, record, owners, mapped, remote);
      return ctx.lookups.firstAlone(() => syncOne(ctx, record, owners, undefined, remote));
    },
    'document',
  );
}

async function syncOne(
  ctx: PassScope,
  record: DocumentRecord,
  owners: Map<string, Owner | string>,
  mapped: MappedRecord | undefined,
  remotes: BatchRemotes<RemoteDocument>,
): Promise<Outcome> {
  // Unchanged records never get here: diffBatch counts them without any work.
  if (mapped) return update(ctx, record, mapped.apiId, mapped.syncedState as Partial<DocumentState>);
  const remote = await remotes.get(record.sourceId);
  if (remote) return adopt(ctx, record, remote);
  const owner = owners.get(record.accountSourceId);
  if (typeof owner === 'string' || owner === undefined) {
    throw fail(
      'account',
      owner ?? `account "${record.accountSourceId}" is unknown to this source`,
      true,
      'accountSourceId',
    );
  }
  return create(ctx, record, owner);
}

async function create(ctx: PassScope, record: DocumentRecord, owner: Owner): Promise<Outcome> {
  if (ctx.dryRun) return plan(ctx, record, 'create', 'created');
  const input = documentCreateInput(record, owner.apiId);
  const wantedPaid = mutableState(record).paidAmount;
  // A server that takes the paid amount at creation saves the document write that would follow.
  if (ctx.api.createsPaid && wantedPaid !== null && compareDecimal(wantedPaid, '0') !== 0)
    input.paidAmount = wantedPaid;
  const file = await pdfFor(record, owner.fullName);
  let created: RemoteDocument;
  let current: DocumentMutableState = { paidAmount: '0', dueDate: null };
  try {
    // The API id is stored with the create's completion, before the paid amount is patched: a
    // crash after it leaves a known document that the next pass patches.
    created = await withPendingWrite(
      ctx,
      { kind: record.kind, sourceKey: record.sourceId, operation: 'create' },
      contentHash({ input, file: contentHash(file.bytes.toString('base64')) }),
      (k) => ctx.api.createDocument(record.kind, input, file, { idempotencyKey: k }),
      (answer, key) => {
        current = { paidAmount: answer.paidAmount ?? '0', dueDate: answer.dueDate ?? null };
        const complete = documentPatch(current, mutableState(record)) === null;
        return save(ctx, record, answer.id, { synced: current, complete, completing: key });
      },
    );
  } catch (error) {
    if (errorKindOf(error) !== 'data') throw error;
    // duplicate-source-id (or any refusal of a document that may already exist): never a second document.
    const existing = (await lookupDocuments(ctx, record.kind, [record.sourceId])).get(record.sourceId);
    if (!existing) throw error;
    ctx.lookups.metExisting(record.kind, record.sourceId);
    return adopt(ctx, record, existing);
  }
  if (documentPatch(current, mutableState(record))) {
    await patchIfNeeded(ctx, record, created.id, current);
    await save(ctx, record, created.id);
  }
  return 'created';
}

async function adopt(
  ctx: PassIdentity & PassPorts & PassBookkeeping,
  record: DocumentRecord,
  remote: RemoteDocument,
): Promise<Outcome> {
  const current = { paidAmount: remote.paidAmount ?? '0', dueDate: remote.dueDate ?? null };
  const patch = documentPatch(current, mutableState(record));
  if (ctx.dryRun) return patch ? plan(ctx, record, 'patch', 'updated') : 'unchanged';
  // Writes of this record may be pending (sent, answered, then the process died): a create is moot
  // now, and what is still needed is sent again below from what the service holds.
  await ctx.state.pending.forget({
    sourceId: ctx.sourceId,
    kind: record.kind,
    sourceKey: record.sourceId,
  });
  if (patch) await patchIfNeeded(ctx, record, remote.id, current);
  await save(ctx, record, remote.id, { known: current });
  return patch ? 'updated' : 'unchanged';
}

async function update(
  ctx: PassIdentity & PassPorts & PassBookkeeping,
  record: DocumentRecord,
  documentId: string,
  synced: Partial<DocumentState>,
): Promise<Outcome> {
  if (synced.frozen !== undefined && synced.frozen !== immutableHash(record)) {
    throw fail(
      'update',
      `${kindNoun(record.kind)} ${record.number}: number, dates, amounts, address and file are frozen at creation; only paidAmount and dueDate can change`,
    );
  }
  if (ctx.dryRun) return plan(ctx, record, 'patch', 'updated');
  await patchIfNeeded(ctx, record, documentId, synced);
  await save(ctx, record, documentId, { known: synced });
  return 'updated';
}

async function patchIfNeeded(
  ctx: PassIdentity & PassPorts,
  record: DocumentRecord,
  documentId: string,
  current: Partial<DocumentMutableState>,
): Promise<void> {
  const patch = documentPatch(current, mutableState(record));
  if (!patch) return;
  await withPendingWrite(
    ctx,
    { kind: record.kind, sourceKey: record.sourceId, operation: 'patch' },
    contentHash(patch),
    (k) => ctx.api.patchDocument(record.kind, documentId, patch, { idempotencyKey: k }),
  );
}

/**
 * Stores the document as synced. `complete: false`: its PATCH is still to come, so the fingerprint
 * is left empty (the next pass compares it again) and `synced` is what the service holds so far;
 * `completing`: the create's pending write, finished in the same transaction; `known`: what the
 * service held, kept where the source does not say (a paid amount it does not give).
 */
async function save(
  ctx: PassIdentity & PassPorts,
  record: DocumentRecord,
  apiId: string,
  options: {
    synced?: DocumentMutableState;
    complete?: boolean;
    completing?: string;
    known?: Partial<DocumentMutableState>;
  } = {},
): Promise<void> {
  const mutable = options.synced ?? mutableState(record);
  const paidAmount = mutable.paidAmount ?? options.known?.paidAmount ?? null;
  const state: DocumentState = { frozen: immutableHash(record), ...mutable, paidAmount };
  await ctx.state.recordMap.save(
    ctx.sourceId,
    record.kind,
    {
      sourceKey: record.sourceId,
      apiId,
      contentHash: (options.complete ?? true) ? documentHash(record) : '',
      syncedState: { ...state },
      record,
    },
    ctx.runId,
    options.completing === undefined ? {} : { completing: options.completing },
  );
}

/** Account source id -> its API id, or the reason it is not available (failed, unknown). */
async function resolveOwners(
  ctx: PassScope,
  accountKeys: readonly string[],
): Promise<Map<string, Owner | string>> {
  const wanted = [...new Set(accountKeys)];
  const owners = new Map<string, Owner | string>();
  if (wanted.length === 0) return owners;
  const mapped = await ctx.state.recordMap.getMany(ctx.sourceId, 'account', wanted);
  for (const [key, row] of mapped)
    owners.set(key, { apiId: row.apiId, fullName: String(row.syncedState.fullName ?? key) });
  const missing = wanted.filter((k) => !owners.has(k));
  for (const failure of await ctx.state.failures.open({
    sourceId: ctx.sourceId,
    kind: 'account',
    sourceKeys: missing,
  })) {
    owners.set(failure.sourceKey, `account "${failure.sourceKey}" failed: ${failure.message}`);
  }
  if (ctx.dryRun) {
    // A dry run plans account creations without making them: documents can count on those accounts.
    for (const key of missing)
      if (ctx.report.plans('account', key)) owners.set(key, { apiId: '(planned)', fullName: key });
  }
  const stillMissing = missing.filter((k) => !owners.has(k));
  for (const [key, account] of await recoverAccounts(ctx, stillMissing)) {
    owners.set(key, { apiId: account.id, fullName: account.fullName });
  }
  return owners;
}

async function pdfFor(record: DocumentRecord, accountName: string): Promise<PdfFile> {
  if (record.file) return { bytes: await readFile(record.file), fileName: basename(record.file) };
  return {
    bytes: await renderDocumentPdf(record, accountName),
    fileName: `${record.number.replace(/[^\w.-]+/g, '_')}.pdf`,
  };
}

function plan(ctx: PassBookkeeping, record: DocumentRecord, operation: string, outcome: Outcome): Outcome {
  return ctx.report.planned(
    { kind: record.kind, sourceKey: record.sourceId, operation, detail: record.number },
    outcome,
  );
}

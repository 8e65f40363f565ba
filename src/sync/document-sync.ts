import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type { RecordOrigin } from '../domain/records.js';
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
import type { MappedRecord } from '../state/record-map.js';
import { LOOKUP_BATCH, lookupAccounts } from './account-sync.js';
import type { PdfFile, RemoteDocument } from './api-port.js';
import { chunks, diffBatch, processBatchOf, type SyncContext, withPendingWrite } from './context.js';
import { fail, type Outcome } from './outcome.js';

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
 * (and fail with its reason when it failed), unknown ones are looked up in batches of 50 before
 * anything is created, a duplicate-source-id answer becomes a lookup, and paid amount / due date
 * changes go through the document PATCH.
 */
export async function syncDocuments(
  ctx: SyncContext,
  kind: DocumentRecord['kind'],
  items: readonly Item[],
): Promise<void> {
  const plan = await diffBatch(ctx, kind, items, documentHash);
  const owners = await resolveOwners(
    ctx,
    plan.work.map((i) => i.record.accountSourceId),
  );
  const remote = await lookupDocuments(ctx, kind, plan.unknown);
  await processBatchOf(
    ctx,
    kind,
    plan,
    ({ record }) =>
      syncOne(ctx, record, owners, plan.known.get(record.sourceId), remote.get(record.sourceId)),
    'document',
  );
}

async function syncOne(
  ctx: SyncContext,
  record: DocumentRecord,
  owners: Map<string, Owner | string>,
  mapped: MappedRecord | undefined,
  remote: RemoteDocument | undefined,
): Promise<Outcome> {
  // Unchanged records never get here: diffBatch counts them without any work.
  if (mapped) return update(ctx, record, mapped.apiId, mapped.syncedState as Partial<DocumentState>);
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

async function create(ctx: SyncContext, record: DocumentRecord, owner: Owner): Promise<Outcome> {
  if (ctx.dryRun) return plan(ctx, record, 'create', 'created');
  const input = documentCreateInput(record, owner.apiId);
  const file = await pdfFor(record, owner.fullName);
  let created: RemoteDocument;
  try {
    created = await withPendingWrite(
      ctx,
      { kind: record.kind, sourceKey: record.sourceId, operation: 'create' },
      contentHash({ input, file: contentHash(file.bytes.toString('base64')) }),
      (k) => ctx.api.createDocument(record.kind, input, file, { idempotencyKey: k }),
    );
  } catch (error) {
    // duplicate-source-id (or any refusal of a document that may already exist): never a second document.
    const existing = (await lookupDocuments(ctx, record.kind, [record.sourceId])).get(record.sourceId);
    if (!existing) throw error;
    return adopt(ctx, record, existing);
  }
  await patchIfNeeded(ctx, record, created.id, {
    paidAmount: created.paidAmount ?? '0',
    dueDate: created.dueDate ?? null,
  });
  await save(ctx, record, created.id);
  return 'created';
}

async function adopt(ctx: SyncContext, record: DocumentRecord, remote: RemoteDocument): Promise<Outcome> {
  const current = { paidAmount: remote.paidAmount ?? '0', dueDate: remote.dueDate ?? null };
  const patch = documentPatch(current, mutableState(record));
  if (ctx.dryRun) return patch ? plan(ctx, record, 'patch', 'updated') : 'unchanged';
  if (patch) await patchIfNeeded(ctx, record, remote.id, current);
  await save(ctx, record, remote.id);
  return patch ? 'updated' : 'unchanged';
}

async function update(
  ctx: SyncContext,
  record: DocumentRecord,
  documentId: string,
  synced: Partial<DocumentState>,
): Promise<Outcome> {
  if (synced.frozen !== undefined && synced.frozen !== immutableHash(record)) {
    throw fail(
      'update',
      `${record.kind === 'invoice' ? 'invoice' : 'credit note'} ${record.number}: number, dates, amounts, address and file are frozen at creation; only paidAmount and dueDate can change`,
    );
  }
  if (ctx.dryRun) return plan(ctx, record, 'patch', 'updated');
  await patchIfNeeded(ctx, record, documentId, synced);
  await save(ctx, record, documentId);
  return 'updated';
}

async function patchIfNeeded(
  ctx: SyncContext,
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

async function save(ctx: SyncContext, record: DocumentRecord, apiId: string): Promise<void> {
  const state: DocumentState = { frozen: immutableHash(record), ...mutableState(record) };
  await ctx.recordMap.save(
    ctx.sourceId,
    record.kind,
    {
      sourceKey: record.sourceId,
      apiId,
      contentHash: documentHash(record),
      syncedState: { ...state },
      record,
    },
    ctx.runId,
  );
}

/** Account source id -> its API id, or the reason it is not available (failed, unknown). */
async function resolveOwners(
  ctx: SyncContext,
  accountKeys: readonly string[],
): Promise<Map<string, Owner | string>> {
  const wanted = [...new Set(accountKeys)];
  const owners = new Map<string, Owner | string>();
  if (wanted.length === 0) return owners;
  const mapped = await ctx.recordMap.getMany(ctx.sourceId, 'account', wanted);
  for (const [key, row] of mapped)
    owners.set(key, { apiId: row.apiId, fullName: String(row.syncedState.fullName ?? key) });
  const missing = wanted.filter((k) => !owners.has(k));
  for (const failure of await ctx.failures.open({
    sourceId: ctx.sourceId,
    kind: 'account',
    sourceKeys: missing,
  })) {
    owners.set(failure.sourceKey, `account "${failure.sourceKey}" failed: ${failure.message}`);
  }
  if (ctx.dryRun) {
    // A dry run plans account creations without making them: documents can count on those accounts.
    const planned = new Set(ctx.plan.filter((p) => p.kind === 'account').map((p) => p.sourceKey));
    for (const key of missing) if (planned.has(key)) owners.set(key, { apiId: '(planned)', fullName: key });
  }
  const stillMissing = missing.filter((k) => !owners.has(k));
  for (const [key, account] of await lookupAccounts(ctx, stillMissing)) {
    owners.set(key, { apiId: account.id, fullName: account.fullName });
  }
  return owners;
}

async function lookupDocuments(
  ctx: SyncContext,
  kind: DocumentRecord['kind'],
  sourceIds: readonly string[],
): Promise<Map<string, RemoteDocument>> {
  const found = new Map<string, RemoteDocument>();
  for (const batch of chunks([...new Set(sourceIds)], LOOKUP_BATCH)) {
    for (const doc of await ctx.api.findDocumentsBySourceIds(kind, batch))
      if (doc.sourceId) found.set(doc.sourceId, doc);
  }
  return found;
}

async function pdfFor(record: DocumentRecord, accountName: string): Promise<PdfFile> {
  if (record.file) return { bytes: await readFile(record.file), fileName: basename(record.file) };
  return {
    bytes: await renderDocumentPdf(record, accountName),
    fileName: `${record.number.replace(/[^\w.-]+/g, '_')}.pdf`,
  };
}

function plan(ctx: SyncContext, record: DocumentRecord, operation: string, outcome: Outcome): Outcome {
  ctx.plan.push({ kind: record.kind, sourceKey: record.sourceId, operation, detail: record.number });
  return outcome;
}

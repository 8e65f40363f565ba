import { messageOf } from '../domain/errors.js';
import type { AccountRecord, CreditNoteRecord, InvoiceRecord, RecordOrigin } from '../domain/records.js';
import { unstorableFieldOf } from '../domain/text.js';
import type { SourceBatch } from '../sources/source.js';
import { syncAccounts } from './account-sync.js';
import { syncDocuments } from './document-sync.js';
import { recordFailure, recordRejected } from './failure-recorder.js';
import type { PassBookkeeping, PassIdentity, PassPorts, PassScope } from './pass-scope.js';
import type { TagResolver } from './tag-resolver.js';

/**
 * Asks for the next batch before the current one is handed out, so a source reads (parses,
 * validates, fetches a page) while the engine waits on the state DB or the API. Sources checkpoint
 * in `complete()`, never on being asked for the next batch, so reading one ahead loses nothing.
 */
export async function* readAhead<T>(batches: AsyncIterable<T>): AsyncGenerator<T> {
  const iterator = batches[Symbol.asyncIterator]();
  let next = iterator.next();
  try {
    for (;;) {
      const result = await next;
      if (result.done) return;
      next = iterator.next();
      // Settled later, or never when the engine stops here: do not let it be an unhandled rejection.
      next.catch(() => undefined);
      yield result.value;
    }
  } finally {
    await iterator.return?.();
  }
}

/**
 * One batch of the source, then what it did to its records, written in one call. When the batch
 * stops on a fault, what it did until then is still written if the state DB takes it.
 */
export async function processBatch(ctx: PassScope, tags: TagResolver, batch: SourceBatch): Promise<void> {
  try {
    await syncBatch(ctx, tags, batch);
  } catch (error) {
    await ctx.touched
      .flush()
      .catch((writing: unknown) =>
        ctx.logger.warn({ reason: messageOf(writing) }, "the batch's records could not be listed in its run"),
      );
    throw error;
  }
  await ctx.touched.flush();
}

async function syncBatch(ctx: PassScope, tags: TagResolver, batch: SourceBatch): Promise<void> {
  ctx.report.progress({ type: 'records', read: batch.records.length, rejected: batch.rejected.length });
  await recordRejected(ctx, batch.rejected);
  const records = await storableRecords(ctx, batch.records);
  const accounts: Array<{ record: AccountRecord; origin: RecordOrigin }> = [];
  const invoices: Array<{ record: InvoiceRecord; origin: RecordOrigin }> = [];
  const creditNotes: Array<{ record: CreditNoteRecord; origin: RecordOrigin }> = [];
  for (const { record, origin } of records) {
    if (record.kind === 'account') accounts.push({ record, origin });
    else if (record.kind === 'invoice') invoices.push({ record, origin });
    else creditNotes.push({ record, origin });
  }
  for (const round of roundsOf(accounts)) await syncAccounts(ctx, tags, round);
  for (const round of roundsOf(invoices)) await syncDocuments(ctx, 'invoice', round);
  for (const round of roundsOf(creditNotes)) await syncDocuments(ctx, 'creditNote', round);
}

/**
 * The records whose text the state DB can store; any other is refused as its row's data, before
 * any API call (a NUL character would be sent, then fail to be recorded, and fail every pass).
 */
async function storableRecords(
  ctx: PassIdentity & PassPorts & PassBookkeeping,
  items: SourceBatch['records'],
): Promise<SourceBatch['records']> {
  const storable: SourceBatch['records'] = [];
  for (const item of items) {
    const field = unstorableFieldOf(item.record);
    if (field === null) {
      storable.push(item);
      continue;
    }
    await recordFailure(
      ctx,
      item.record.kind,
      item.record.sourceId,
      item.origin,
      {
        stage: 'validate',
        message: `${field}: holds a character that cannot be stored (a NUL byte or an unpaired surrogate); remove it`,
        status: null,
        apiCode: null,
        retryable: false,
        column: field,
      },
      null,
    );
  }
  return storable;
}

/**
 * Splits a kind's records into rounds of distinct keys, in order: a key a batch holds twice is
 * synced twice, one after the other, never at the same time (the CSV source refuses such rows; a
 * module source may send them).
 */
export function roundsOf<T extends { record: { sourceId: string } }>(items: readonly T[]): T[][] {
  const rounds: Array<{ items: T[]; keys: Set<string> }> = [];
  for (const item of items) {
    const key = item.record.sourceId;
    let round = rounds.find((r) => !r.keys.has(key));
    if (!round) {
      round = { items: [], keys: new Set() };
      rounds.push(round);
    }
    round.items.push(item);
    round.keys.add(key);
  }
  return rounds.map((r) => r.items);
}

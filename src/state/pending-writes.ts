import { randomUUID } from 'node:crypto';
import type { StateDb } from './database.js';
import type { RecordKind } from './schema.js';
import { type StateScopes, scopeColumns, sourceInScope, UNSTAMPED_SCOPES } from './scopes.js';
import { StateCalls } from './state-calls.js';

export interface PendingWriteRef {
  sourceId: string;
  kind: RecordKind;
  sourceKey: string;
  operation: string;
}

/**
 * Idempotency keys written before a write is sent. After a crash, the same write of the same body
 * is sent again with the same key, so the API replays it instead of executing it twice. A record's
 * keys are kept within its source's scope (see `state/scopes.ts`).
 *
 * Every statement here is idempotent, so each is `retried` on a lost connection (see `StateCalls`):
 * the read of a record's pending key; the count of a new attempt, which sets the count read plus one
 * (not `attempts + 1`); the new key's insert, which does nothing when its key is there already (its
 * first attempt took effect); and the deletes by key or by record.
 */
export class PendingWritesRepository {
  /** `calls`: how statements run (default `StateCalls.direct`; `syncStateRepos` passes the retrying ones). */
  constructor(
    private readonly db: StateDb,
    private readonly scopes: StateScopes = UNSTAMPED_SCOPES,
    private readonly calls: StateCalls = StateCalls.direct,
    private readonly newKey: () => string = randomUUID,
  ) {}

  /** The key to send: the stored one when the same body was pending, else a new one (stored first). */
  async begin(ref: PendingWriteRef, bodyHash: string): Promise<string> {
    const existing = await this.calls.retried('pendingWrites.find', () =>
      this.db
        .selectFrom('pending_writes')
        .select(['idempotency_key', 'body_hash', 'attempts'])
        .where(sourceInScope(this.scopes, ref.sourceId))
        .where('kind', '=', ref.kind)
        .where('source_key', '=', ref.sourceKey)
        .where('operation', '=', ref.operation)
        .executeTakeFirst(),
    );
    if (existing?.body_hash === bodyHash) {
      const attempts = existing.attempts + 1;
      await this.calls.retried('pendingWrites.countAttempt', () =>
        this.db
          .updateTable('pending_writes')
          .set({ attempts })
          .where('idempotency_key', '=', existing.idempotency_key)
          .execute(),
      );
      return existing.idempotency_key;
    }
    const key = this.newKey();
    await this.calls.retried('pendingWrites.replace', () =>
      this.db.transaction().execute(async (tx) => {
        if (existing)
          await tx
            .deleteFrom('pending_writes')
            .where('idempotency_key', '=', existing.idempotency_key)
            .execute();
        await tx
          .insertInto('pending_writes')
          .values({
            idempotency_key: key,
            ...scopeColumns(this.scopes, ref.sourceId),
            kind: ref.kind,
            source_key: ref.sourceKey,
            operation: ref.operation,
            body_hash: bodyHash,
            attempts: 1,
          })
          .onConflict((oc) => oc.column('idempotency_key').doNothing())
          .execute();
      }),
    );
    return key;
  }

  /** The write got a final answer (success or a permanent refusal): its key is no longer needed. */
  async finish(key: string): Promise<void> {
    await this.calls.retried('pendingWrites.finish', () =>
      this.db.deleteFrom('pending_writes').where('idempotency_key', '=', key).execute(),
    );
  }

  /** Drops the pending keys of a record (of one operation when given): its record was adopted instead. */
  async forget(ref: Omit<PendingWriteRef, 'operation'> & { operation?: string }): Promise<void> {
    let query = this.db
      .deleteFrom('pending_writes')
      .where(sourceInScope(this.scopes, ref.sourceId))
      .where('kind', '=', ref.kind)
      .where('source_key', '=', ref.sourceKey);
    if (ref.operation !== undefined) query = query.where('operation', '=', ref.operation);
    await this.calls.retried('pendingWrites.forget', () => query.execute());
  }

  async count(sourceId: string): Promise<number> {
    const row = await this.calls.retried('pendingWrites.count', () =>
      this.db
        .selectFrom('pending_writes')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where(sourceInScope(this.scopes, sourceId))
        .executeTakeFirstOrThrow(),
    );
    return Number(row.n);
  }
}

import { ApiResponseError, NetworkError } from '../../../src/api/errors.js';
import type {
  AccountRecord,
  CreditNoteRecord,
  InvoiceRecord,
  RecordKind,
  SourceRecord,
} from '../../../src/domain/records.js';
import type {
  BatchDiff,
  FailureInput,
  FailureRow,
  MappedRecord,
  RunStatus,
} from '../../../src/domain/sync-state.js';
import type { AccountCreateBody, AccountUpdateBody } from '../../../src/mapping/account-payload.js';
import type { DocumentCreateInput } from '../../../src/mapping/document-payload.js';
import type { Source, SourceUnit } from '../../../src/sources/source.js';
import type {
  DocumentKind,
  PdfFile,
  PendingWriteRef,
  RemoteAccount,
  RemoteDocument,
  RemoteTag,
  SyncApi,
  SyncState,
  TouchedRecord,
  Write,
} from '../../../src/sync/ports.js';

/**
 * In-memory fakes of the sync engine's ports (`sync/ports.ts`), faithful to what the engine relies
 * on: the API replays a write sent again with the same Idempotency-Key, refuses a second account
 * for a linked source and a second document with the same sourceId (400), and finds accounts by
 * their source id. Both can "crash" at the N-th call (see `Crash`).
 */

/** A process killed at one call: that call, and every later one, fails; `afterCommit`: the call's effect stays. */
export class Crash {
  calls = 0;
  #at: number | null = null;
  #afterCommit = false;
  #dead = false;
  /** Every call made, in order, with the step it was (`api.createAccount`, `state.pending.begin`...). */
  readonly steps: string[] = [];

  at(call: number, afterCommit: boolean): void {
    this.#at = call;
    this.#afterCommit = afterCommit;
  }

  /** A restarted process: nothing fails any more. */
  restart(): void {
    this.#at = null;
    this.#dead = false;
  }

  get dead(): boolean {
    return this.#dead;
  }

  /** Runs one call of a port, unless the process is dead (or dies here). */
  async call<T>(step: string, run: () => Promise<T> | T): Promise<T> {
    if (this.#dead) throw new KilledError(step);
    this.calls++;
    this.steps.push(step);
    if (this.calls === this.#at) {
      this.#dead = true;
      if (this.#afterCommit) await run();
      throw new KilledError(step);
    }
    return run();
  }
}

/** What a dead process sees: nothing answers. */
export class KilledError extends Error {
  constructor(step: string) {
    super(`killed at ${step}`);
  }
}

interface StoredAccount extends RemoteAccount {
  tagIds: Set<string>;
  lastUpdate: string | null;
}

export class FakeApi implements SyncApi {
  readonly organizationId = 'org-1';
  readonly accounts = new Map<string, StoredAccount>();
  readonly documents = new Map<string, RemoteDocument & { kind: DocumentKind }>();
  readonly tags = new Map<string, RemoteTag>();
  /** Writes that reached the API (replays of a stored Idempotency-Key excluded). */
  readonly writes: string[] = [];
  /** Every call, reads included. */
  readonly calls: string[] = [];
  /** The next `createAccount` / `createDocument` answers this instead (once). */
  refuseNext: ApiResponseError | null = null;
  /** Calls that fail with the given error instead of running, by method name (each once). */
  readonly faults = new Map<string, Error>();
  readonly #replays = new Map<string, unknown>();
  #ids = 0;

  constructor(readonly crash: Crash = new Crash()) {}

  /** A record on the service that this state does not know of (a lost state DB, another run). */
  seedAccount(record: AccountRecord, connectionId: string, tags: string[] = []): StoredAccount {
    const account = this.#newAccount(
      { fullName: record.fullName, currencyCode: record.currencyCode, billingAddress: record.billingAddress },
      { connectionId, sourceId: record.sourceId },
    );
    for (const name of tags) account.tagIds.add(this.#tag(name).id);
    return account;
  }

  tagNamesOf(accountId: string): string[] {
    const account = this.accounts.get(accountId);
    return [...(account?.tagIds ?? [])]
      .map((id) => [...this.tags.values()].find((t) => t.id === id)!.name)
      .sort();
  }

  /** `api.compat.createPaid`: the create carries the paid amount. */
  createsPaid = false;
  /** A server that answers the create without applying the paid amount sent (a misconfiguration). */
  ignoresCreatedPaid = false;
  /** The paid amount each create carried, in order (undefined: none sent). */
  readonly createdPaid: Array<string | undefined> = [];

  /** What the `source` filter compares (not shown in the spec): as the sandbox's switch. */
  sourceFilter: 'sourceId' | 'connectionId' | 'connectorType' = 'sourceId';

  findAccountsBySourceIds(sourceIds: readonly string[]): Promise<RemoteAccount[]> {
    return this.#read('findAccountsBySourceIds', () =>
      [...this.accounts.values()]
        .filter((a) => a.source && sourceIds.includes(a.source[this.sourceFilter]))
        .map(copy),
    );
  }

  listLinkedAccounts(): Promise<RemoteAccount[]> {
    return this.#read('listLinkedAccounts', () =>
      [...this.accounts.values()].filter((a) => a.source).map(copy),
    );
  }

  createAccount(body: AccountCreateBody, write: Write): Promise<RemoteAccount> {
    return this.#write('createAccount', write, () => {
      this.#refused();
      const linked = [...this.accounts.values()].find(
        (a) =>
          a.source?.connectionId === body.source.connectionId && a.source.sourceId === body.source.sourceId,
      );
      if (linked)
        throw new ApiResponseError({
          status: 400,
          method: 'POST',
          path: '/accounts',
          message: `Source ${body.source.sourceId} is already linked to account ${linked.id}`,
        });
      return copy(this.#newAccount(body, body.source));
    });
  }

  updateAccount(accountId: string, body: AccountUpdateBody, write: Write): Promise<RemoteAccount> {
    return this.#write('updateAccount', write, () => {
      const account = this.#account(accountId);
      Object.assign(account, {
        fullName: body.fullName,
        currencyCode: body.currencyCode,
        billingAddress: body.billingAddress,
      });
      return copy(account);
    });
  }

  touchAccountSource(accountId: string, lastUpdate: string, write: Write): Promise<RemoteAccount> {
    return this.#write('touchAccountSource', write, () => {
      const account = this.#account(accountId);
      account.lastUpdate = lastUpdate;
      return copy(account);
    });
  }

  linkAccountSource(
    accountId: string,
    link: { connectionId: string; sourceId: string; lastUpdate: string },
    write: Write,
  ): Promise<RemoteAccount> {
    return this.#write('linkAccountSource', write, () => {
      const account = this.#account(accountId);
      const other =
        account.source &&
        (account.source.connectionId !== link.connectionId || account.source.sourceId !== link.sourceId);
      if (other)
        throw new ApiResponseError({
          status: 400,
          method: 'PUT',
          path: `/accounts/${accountId}/source`,
          message: 'The account is linked to another source: unlink it first',
        });
      account.source = { connectionId: link.connectionId, sourceId: link.sourceId, connectorType: 'Custom' };
      account.lastUpdate = link.lastUpdate;
      return copy(account);
    });
  }

  unlinkAccountSource(accountId: string): Promise<void> {
    return this.#read('unlinkAccountSource', () => {
      this.writes.push('unlinkAccountSource');
      this.#account(accountId).source = null;
    });
  }

  listTags(): Promise<RemoteTag[]> {
    return this.#read('listTags', () => [...this.tags.values()].map((t) => ({ ...t })));
  }

  createTag(name: string, write: Write): Promise<RemoteTag> {
    return this.#write('createTag', write, () => ({ ...this.#tag(name) }));
  }

  attachTags(accountId: string, tagIds: readonly string[], write: Write): Promise<void> {
    return this.#write('attachTags', write, () => {
      for (const id of tagIds) this.#account(accountId).tagIds.add(id);
    });
  }

  detachTag(accountId: string, tagId: string): Promise<void> {
    return this.#read('detachTag', () => {
      this.writes.push('detachTag');
      this.#account(accountId).tagIds.delete(tagId);
    });
  }

  findDocumentsBySourceIds(kind: DocumentKind, sourceIds: readonly string[]): Promise<RemoteDocument[]> {
    return this.#read('findDocumentsBySourceIds', () =>
      [...this.documents.values()]
        .filter((d) => d.kind === kind && d.sourceId !== null && sourceIds.includes(d.sourceId))
        .map(({ kind: _kind, ...d }) => ({ ...d })),
    );
  }

  createDocument(
    kind: DocumentKind,
    input: DocumentCreateInput,
    file: PdfFile,
    write: Write,
  ): Promise<RemoteDocument> {
    return this.#write('createDocument', write, () => {
      this.#refused();
      if (file.bytes.subarray(0, 5).toString() !== '%PDF-') throw new Error('not a PDF');
      this.#account(input.accountId);
      const taken = [...this.documents.values()].some(
        (d) => d.kind === kind && d.sourceId === input.sourceId,
      );
      if (taken)
        throw new ApiResponseError({
          status: 400,
          method: 'POST',
          path: kind === 'invoice' ? '/invoices' : '/credit-notes',
          apiCode: `app-invoicing.${kind === 'invoice' ? 'invoice' : 'credit-note'}.duplicate-source-id`,
          message: 'duplicate sourceId',
        });
      this.createdPaid.push(input.paidAmount);
      const paid = this.createsPaid && !this.ignoresCreatedPaid ? input.paidAmount : undefined;
      const doc = {
        kind,
        id: `doc-${++this.#ids}`,
        sourceId: input.sourceId ?? null,
        accountId: input.accountId,
        number: input.number,
        paidAmount: paid ?? '0.00',
        dueDate: input.dueDate ?? null,
        readOnlyReason: null,
      };
      this.documents.set(doc.id, doc);
      const { kind: _kind, ...remote } = doc;
      return { ...remote };
    });
  }

  patchDocument(
    _kind: DocumentKind,
    documentId: string,
    body: { paidAmount?: string; dueDate?: InvoiceRecord['dueDate'] },
    write: Write,
  ): Promise<RemoteDocument> {
    return this.#write('patchDocument', write, () => {
      const doc = this.documents.get(documentId);
      if (!doc) throw new ApiResponseError({ status: 404, method: 'PATCH', path: `/invoices/${documentId}` });
      if (body.paidAmount !== undefined) doc.paidAmount = body.paidAmount;
      if (body.dueDate !== undefined) doc.dueDate = body.dueDate;
      const { kind: _kind, ...remote } = doc;
      return { ...remote };
    });
  }

  #read<T>(name: string, run: () => T): Promise<T> {
    return this.crash.call(`api.${name}`, () => {
      this.calls.push(name);
      this.#fault(name);
      return run();
    });
  }

  #fault(name: string): void {
    const fault = this.faults.get(name);
    if (!fault) return;
    this.faults.delete(name);
    throw fault;
  }

  /** A write: sent again with a stored key, it is answered as the first time, and not applied twice. */
  #write<T>(name: string, write: Write, run: () => T): Promise<T> {
    return this.crash.call(`api.${name}`, () => {
      this.calls.push(name);
      this.#fault(name);
      if (this.#replays.has(write.idempotencyKey))
        return structuredClone(this.#replays.get(write.idempotencyKey)) as T;
      const result = run();
      this.writes.push(name);
      this.#replays.set(write.idempotencyKey, structuredClone(result));
      return result;
    });
  }

  #refused(): void {
    const refusal = this.refuseNext;
    this.refuseNext = null;
    if (refusal) throw refusal;
  }

  #account(id: string): StoredAccount {
    const account = this.accounts.get(id);
    if (!account) throw new ApiResponseError({ status: 404, method: 'GET', path: `/accounts/${id}` });
    return account;
  }

  #newAccount(
    values: Pick<RemoteAccount, 'fullName' | 'currencyCode'> & {
      billingAddress: RemoteAccount['billingAddress'];
    },
    source: { connectionId: string; sourceId: string },
  ): StoredAccount {
    const account: StoredAccount = {
      id: `acc-${++this.#ids}`,
      fullName: values.fullName,
      currencyCode: values.currencyCode,
      billingAddress: values.billingAddress,
      source: { ...source, connectorType: 'Custom' },
      readOnlyReason: null,
      tagIds: new Set(),
      lastUpdate: null,
    };
    this.accounts.set(account.id, account);
    return account;
  }

  #tag(name: string): RemoteTag {
    const known = [...this.tags.values()].find((t) => t.name.toLowerCase() === name.toLowerCase());
    if (known) return known;
    const tag = { id: `tag-${++this.#ids}`, name };
    this.tags.set(tag.id, tag);
    return tag;
  }
}

const copy = (account: StoredAccount): RemoteAccount => ({
  id: account.id,
  fullName: account.fullName,
  currencyCode: account.currencyCode,
  billingAddress: account.billingAddress ? { ...account.billingAddress } : null,
  source: account.source ? { ...account.source } : null,
  readOnlyReason: account.readOnlyReason,
});

const mapKey = (sourceId: string, kind: RecordKind, key: string) => `${sourceId}\u0000${kind}\u0000${key}`;

/** The state DB in memory: what the engine's `SyncState` port asks for, and what a test checks. */
export class FakeState implements SyncState {
  readonly rows = new Map<string, MappedRecord & { kind: RecordKind }>();
  readonly pendingKeys = new Map<string, { ref: PendingWriteRef; bodyHash: string; key: string }>();
  readonly failureRows = new Map<string, FailureRow>();
  readonly runRows: Array<{
    id: string;
    sourceId: string;
    trigger: string;
    status: RunStatus;
    counts: unknown;
  }> = [];
  #keys = 0;

  constructor(readonly crash: Crash = new Crash()) {}

  readonly recordMap: SyncState['recordMap'] = {
    diff: (sourceId, kind, fingerprints) =>
      this.#call('recordMap.diff', (): BatchDiff => {
        const diff: BatchDiff = { changed: new Map(), unknown: new Set() };
        for (const [key, fingerprint] of fingerprints) {
          const row = this.rows.get(mapKey(sourceId, kind, key));
          if (!row) diff.unknown.add(key);
          else if (row.contentHash !== fingerprint) diff.changed.set(key, structuredClone(row));
        }
        return diff;
      }),
    setFingerprints: (sourceId, kind, fingerprints) =>
      this.#call('recordMap.setFingerprints', () => {
        for (const [key, fingerprint] of fingerprints) {
          const row = this.rows.get(mapKey(sourceId, kind, key));
          if (row) row.contentHash = fingerprint;
        }
      }),
    getMany: (sourceId, kind, keys) =>
      this.#call('recordMap.getMany', () => {
        const found = new Map<string, MappedRecord>();
        for (const key of keys) {
          const row = this.rows.get(mapKey(sourceId, kind, key));
          if (row) found.set(key, structuredClone(row));
        }
        return found;
      }),
    save: (sourceId, kind, record, _runId, options = {}) =>
      this.#call('recordMap.save', () => {
        // One transaction: the row and the completion of its pending write.
        this.rows.set(mapKey(sourceId, kind, record.sourceKey), { ...structuredClone(record), kind });
        for (const [id, held] of this.pendingKeys)
          if (held.key === options.completing) this.pendingKeys.delete(id);
      }),
    countUpTo: (sourceId, kind, max) =>
      this.#call('recordMap.countUpTo', () => Math.min(max, this.#ofKind(sourceId, kind).length)),
    linkedKeysPage: (sourceId, kind, after, limit) =>
      this.#call('recordMap.linkedKeysPage', () =>
        this.#linked(sourceId, kind)
          .filter((r) => after === null || r.sourceKey > after)
          .sort((a, b) => (a.sourceKey < b.sourceKey ? -1 : 1))
          .slice(0, limit)
          .map((r) => ({
            sourceKey: r.sourceKey,
            tags: (r.record as { tags?: string[] } | null)?.tags ?? [],
          })),
      ),
    countLinked: (sourceId, kind) =>
      this.#call('recordMap.countLinked', () => this.#linked(sourceId, kind).length),
    fingerprints: (sourceId, kind, max) =>
      this.#call('recordMap.fingerprints', () => {
        const rows = this.#ofKind(sourceId, kind);
        return rows.length > max ? null : new Map(rows.map((r) => [r.sourceKey, r.contentHash]));
      }),
    storedRecords: (sourceId, filter = {}) =>
      this.#call('recordMap.storedRecords', () =>
        [...this.rows.entries()]
          .filter(([k]) => k.startsWith(`${sourceId}\u0000`))
          .map(([, r]) => r)
          .filter(
            (r) =>
              (!filter.kind || r.kind === filter.kind) && (!filter.keys || filter.keys.includes(r.sourceKey)),
          )
          .filter((r) => r.record !== undefined)
          .map((r) => ({
            kind: r.kind,
            sourceKey: r.sourceKey,
            record: r.record as Record<string, unknown>,
          })),
      ),
    resetHash: (sourceId, kind, keys) =>
      this.#call('recordMap.resetHash', () => {
        for (const key of keys) {
          const row = this.rows.get(mapKey(sourceId, kind, key));
          if (row) row.contentHash = '';
        }
      }),
    resetHashes: (sourceId) =>
      this.#call('recordMap.resetHashes', () => {
        let n = 0;
        for (const [k, row] of this.rows)
          if (k.startsWith(`${sourceId}\u0000`)) {
            row.contentHash = '';
            n++;
          }
        return n;
      }),
    maintainIfGrown: () => this.#call('recordMap.maintainIfGrown', () => false),
  };

  readonly pending: SyncState['pending'] = {
    begin: (ref, bodyHash) =>
      this.#call('pending.begin', () => {
        const id = `${ref.sourceId}\u0000${ref.kind}\u0000${ref.sourceKey}\u0000${ref.operation}`;
        const held = this.pendingKeys.get(id);
        if (held?.bodyHash === bodyHash) return held.key;
        const key = `key-${++this.#keys}`;
        this.pendingKeys.set(id, { ref, bodyHash, key });
        return key;
      }),
    finish: (key) =>
      this.#call('pending.finish', () => {
        for (const [id, held] of this.pendingKeys) if (held.key === key) this.pendingKeys.delete(id);
      }),
    forget: (ref) =>
      this.#call('pending.forget', () => {
        for (const [id, held] of this.pendingKeys) {
          const { sourceId, kind, sourceKey, operation } = held.ref;
          if (sourceId === ref.sourceId && kind === ref.kind && sourceKey === ref.sourceKey)
            if (ref.operation === undefined || ref.operation === operation) this.pendingKeys.delete(id);
        }
      }),
  };

  readonly failures: SyncState['failures'] = {
    record: (input: FailureInput) =>
      this.#call('failures.record', () => {
        const id = `${input.sourceId}\u0000${input.kind}\u0000${input.sourceKey}`;
        const before = this.failureRows.get(id);
        const now = new Date();
        this.failureRows.set(id, {
          id,
          sourceId: input.sourceId,
          kind: input.kind,
          sourceKey: input.sourceKey,
          stage: input.stage,
          status: input.status ?? null,
          apiCode: input.apiCode ?? null,
          message: input.message,
          file: input.file ?? null,
          line: input.line ?? null,
          column: input.column ?? null,
          retryable: input.retryable,
          attempts: (before?.attempts ?? 0) + 1,
          nextRetryAt: null,
          payload: input.payload ?? null,
          firstFailedAt: before?.firstFailedAt ?? now,
          lastFailedAt: now,
        });
      }),
    recordMany: async (inputs) => {
      for (const input of inputs) await this.failures.record(input);
    },
    openKinds: (sourceId) =>
      this.#call(
        'failures.openKinds',
        () =>
          new Set([...this.failureRows.values()].filter((f) => f.sourceId === sourceId).map((f) => f.kind)),
      ),
    resolve: (sourceId, kind, keys, options = {}) =>
      this.#call('failures.resolve', () => {
        for (const key of keys) {
          const id = `${sourceId}\u0000${kind}\u0000${key}`;
          const stage = this.failureRows.get(id)?.stage;
          if (options.sparing !== undefined && stage === options.sparing) continue;
          if (options.only !== undefined && stage !== options.only) continue;
          this.failureRows.delete(id);
        }
      }),
    open: (filter = {}) =>
      this.#call('failures.open', () =>
        [...this.failureRows.values()].filter(
          (f) =>
            (!filter.sourceId || f.sourceId === filter.sourceId) &&
            (!filter.kind || f.kind === filter.kind) &&
            (!filter.sourceKeys || filter.sourceKeys.includes(f.sourceKey)) &&
            (!filter.ids || filter.ids.includes(f.id)),
        ),
      ),
  };

  readonly runs: SyncState['runs'] = {
    start: (sourceId, trigger) =>
      this.#call('runs.start', () => {
        const id = String(this.runRows.length + 1);
        this.runRows.push({ id, sourceId, trigger, status: 'running', counts: {} });
        return id;
      }),
    finish: (id, status, counts) =>
      this.#call('runs.finish', () => {
        const run = this.runRows.find((r) => r.id === id)!;
        run.status = status;
        run.counts = counts;
      }),
    addToCounts: (id, facts) =>
      this.#call('runs.addToCounts', () => {
        const run = this.runRows.find((r) => r.id === id)!;
        run.counts = { ...(run.counts as Record<string, unknown>), ...facts };
      }),
    // Not a counted call: asked before each batch, it would shift the faults planned by call number.
    cancelRequest: async (id) => {
      const cancel = (this.runRows.find((r) => r.id === id)?.counts as Record<string, unknown>)?.cancel;
      return (cancel as { by?: string } | undefined)?.by ?? null;
    },
  };

  readonly cursors: SyncState['cursors'] = { reset: async () => [] };

  /** What each run did to its records, with the API id the record map held once its batch was over. */
  readonly runRecordRows: Array<TouchedRecord & { runId: string; apiId: string | null }> = [];
  /** How many writes `runRecords.record` took (one per engine batch that touched a record). */
  runRecordWrites = 0;

  readonly runRecords: SyncState['runRecords'] = {
    record: (runId, sourceId, records) =>
      this.#call('runRecords.record', () => {
        this.runRecordWrites++;
        for (const r of records)
          this.runRecordRows.push({
            ...r,
            runId,
            apiId: this.rows.get(mapKey(sourceId, r.kind, r.sourceKey))?.apiId ?? null,
          });
      }),
  };

  /** What the record map holds of a record. */
  mapped(sourceId: string, kind: RecordKind, key: string): (MappedRecord & { kind: RecordKind }) | undefined {
    return this.rows.get(mapKey(sourceId, kind, key));
  }

  #ofKind(sourceId: string, kind: RecordKind) {
    return [...this.rows.entries()]
      .filter(([k]) => k.startsWith(`${sourceId}\u0000${kind}\u0000`))
      .map(([, r]) => r);
  }

  /** Records of the kind whose source is still linked (not unlinked by a tombstone). */
  #linked(sourceId: string, kind: RecordKind) {
    return this.#ofKind(sourceId, kind).filter(
      (r) => (r.syncedState as { unlinked?: boolean }).unlinked !== true,
    );
  }

  #call<T>(step: string, run: () => T): Promise<T> {
    return this.crash.call(`state.${step}`, run);
  }
}

/** A network fault: retryable, the write may or may not have been applied. */
export const connectionReset = () => new NetworkError('socket hang up');

export const account = (n: number, extra: Partial<AccountRecord> = {}): AccountRecord => ({
  kind: 'account',
  sourceId: `A${n}`,
  fullName: `Customer ${n}`,
  currencyCode: 'EUR',
  billingAddress: { street: `${n} Main St`, city: 'Lyon', postalCode: '69001', country: 'FR' },
  tags: [],
  updatedAt: '2026-11-01T10:00:00.000Z',
  ...extra,
});

export const invoice = (n: number, accountN: number, extra: Partial<InvoiceRecord> = {}): InvoiceRecord => ({
  kind: 'invoice',
  sourceId: `I${n}`,
  accountSourceId: `A${accountN}`,
  number: `INV-${n}`,
  issuedDate: { year: 2026, month: 10, day: 1 },
  dueDate: { year: 2026, month: 11, day: 1 },
  totalAmount: '120.00',
  taxAmount: '20.00',
  billingAddress: null,
  file: null,
  paidAmount: null,
  updatedAt: null,
  ...extra,
});

export const creditNote = (n: number, accountN: number): CreditNoteRecord => ({
  kind: 'creditNote',
  sourceId: `C${n}`,
  accountSourceId: `A${accountN}`,
  number: `CN-${n}`,
  issuedDate: { year: 2026, month: 10, day: 5 },
  totalAmount: '12.00',
  taxAmount: '2.00',
  file: null,
  updatedAt: null,
});

/** A source of one unit whose fate is kept: completed, abandoned (with the reason) or released. */
export function trackedSource(
  id: string,
  records: readonly SourceRecord[],
  options: { failReading?: Error } = {},
) {
  const fate: { completed: boolean; abandoned: string | null; released: boolean } = {
    completed: false,
    abandoned: null,
    released: false,
  };
  const unit: SourceUnit = {
    name: 'rows.csv',
    stream: 'accounts',
    async *batches() {
      yield {
        records: records.map((record, i) => ({ record, origin: { file: 'rows.csv', line: i + 2 } })),
        rejected: [],
      };
      if (options.failReading) throw options.failReading;
    },
    complete: async () => {
      fate.completed = true;
    },
    abandon: async (reason) => {
      fate.abandoned = reason;
    },
    release: async () => {
      fate.released = true;
    },
  };
  const source: Source = {
    id,
    type: 'test',
    async *units() {
      yield unit;
    },
  };
  return { source, fate };
}

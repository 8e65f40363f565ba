import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { ReceivablesClient } from '../api/client.js';
import { ApiResponseError } from '../api/errors.js';
import { accountFilters, creditNoteFilters, invoiceFilters } from '../api/filters.js';
import { type Page, paginate } from '../api/pagination.js';
import { withFlow } from '../api/rate-limit/flow.js';
import type { Account, CreditNote, Invoice } from '../api/types.js';
import type { SourceConfig } from '../config/schema.js';
import { AppError } from '../domain/errors.js';
import { SourceLock } from '../jobs/source-lock.js';
import { workerSettingsOf } from '../jobs/worker-settings.js';
import type { ReconcileApi } from '../reconcile/ports.js';
import {
  type ReconcileEstimate,
  type ReconcileOutcome,
  type ReconcileTarget,
  reconcileSource,
} from '../reconcile/reconcile.js';
import type { DocumentKind, ServiceAccount, ServiceDocument } from '../reconcile/types.js';
import { ReconciliationsRepository } from '../state/reconciliations.js';
import { flowOf, type SyncRuntime } from './runtime.js';
import { toParts, toRemoteAccount } from './sync-api.js';

export { describe as describeDrift } from '../reconcile/repair-plan.js';
export { DRIFT_CATEGORIES, type DriftCategory, type DriftItem } from '../reconcile/types.js';
export type { ReconcileEstimate, ReconcileOutcome };

const PAGE = 100;

/** `RemoteAccount` and `ServiceAccount` are the same shape: the reconciliation reads accounts as the sync does. */
const toServiceAccount: (a: Account) => ServiceAccount = toRemoteAccount;

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);

const toServiceDocument = (d: Invoice | CreditNote): ServiceDocument => ({
  id: d.id,
  sourceId: text(d.sourceId),
  accountId: d.accountId,
  number: d.number,
  issuedDate: toParts(d.issuedDate),
  dueDate: toParts(d.dueDate),
  totalAmount: text(d.totalAmount),
  taxAmount: text(d.taxAmount),
  paidAmount: text(d.paidAmount),
  readOnlyReason: d.readOnlyReason ?? null,
});

/**
 * The reconciliation's port over the typed client: lists in pages of 100 (every request through
 * the client, so through the shared rate limiter), each list read once per instance and shared by
 * the sources of one organization reconciled with it.
 */
export class ClientReconcileApi implements ReconcileApi {
  #pages = 0;
  #accounts: Promise<ServiceAccount[]> | undefined;
  readonly #documents = new Map<DocumentKind, Promise<ServiceDocument[]>>();

  constructor(
    private readonly client: ReceivablesClient,
    private readonly organizationId: string,
  ) {}

  async #all<T, R>(
    fetchPage: (after: string | undefined) => Promise<Page<T>>,
    map: (item: T) => R,
  ): Promise<R[]> {
    const out: R[] = [];
    for await (const page of paginate((after) => {
      this.#pages++;
      return fetchPage(after);
    }))
      for (const item of page.nodes) out.push(map(item));
    return out;
  }

  listLinkedAccounts(): Promise<ServiceAccount[]> {
    const filters = accountFilters().where('source', 'isNotEmpty');
    this.#accounts ??= this.#all(
      (after) =>
        this.client.accounts.listPage({ organizationId: this.organizationId, filters, first: PAGE, after }),
      toServiceAccount,
    );
    return this.#accounts;
  }

  listDocuments(kind: DocumentKind): Promise<ServiceDocument[]> {
    let listing = this.#documents.get(kind);
    if (!listing) {
      const { organizationId } = this;
      listing =
        kind === 'invoice'
          ? this.#all(
              (after) =>
                this.client.invoices.listPage({
                  organizationId,
                  filters: invoiceFilters().where('sourceId', 'isNotEmpty'),
                  first: PAGE,
                  after,
                }),
              toServiceDocument,
            )
          : this.#all(
              (after) =>
                this.client.creditNotes.listPage({
                  organizationId,
                  filters: creditNoteFilters().where('sourceId', 'isNotEmpty'),
                  first: PAGE,
                  after,
                }),
              toServiceDocument,
            );
      this.#documents.set(kind, listing);
    }
    return listing;
  }

  /** Forgets the lists read (after repairs: the next source reads them again). */
  forget(): void {
    this.#accounts = undefined;
    this.#documents.clear();
  }

  async getAccount(accountId: string): Promise<ServiceAccount | null> {
    try {
      return toServiceAccount(await this.client.accounts.get(accountId));
    } catch (error) {
      if (error instanceof ApiResponseError && error.status === 404) return null;
      throw error;
    }
  }

  async unlinkAccountSource(accountId: string): Promise<void> {
    await this.client.accounts.unlinkSource(accountId);
  }

  requestCount(): number {
    return this.client.stats.requests;
  }

  listPageCount(): number {
    return this.#pages;
  }
}

export interface ReconcileOptions {
  repair?: boolean;
  /** Stored with the result: `cli` (default), `schedule`, `dashboard`... */
  trigger?: string;
  /** Told the list requests a source will cost, before its first one. */
  onEstimate?: (estimate: ReconcileEstimate) => void;
  /** Shares the lists between the sources of one call (`reconcileSources` passes one). */
  api?: ClientReconcileApi;
}

const targetOf = (config: SourceConfig): ReconcileTarget => ({
  id: config.id,
  connectionId: config.connectionId ?? config.id,
  deleteOrphans: config.reconcile?.deleteOrphans ?? false,
});

/**
 * Reconciles one configured source over a runtime: what `reconcile` runs for each source and what
 * a worker job calls (`reconcileWith(runtime, sourceId, { trigger: 'schedule' })`). The result is
 * stored in `reconciliations` (see `ReconciliationsRepository.latest`).
 */
export async function reconcileWith(
  runtime: SyncRuntime,
  sourceId: string,
  options: ReconcileOptions = {},
): Promise<ReconcileOutcome> {
  const config = runtime.loaded.config.sources.find((s) => s.id === sourceId);
  if (!config) throw new AppError('SOURCE_UNKNOWN', `no source "${sourceId}" in the configuration`);
  const target = await runtime.targets.of(config);
  const api = options.api ?? new ClientReconcileApi(target.client, target.organizationId);
  const repos = new ReconciliationsRepository(runtime.database.db, runtime.scopes);
  // Its lists and repairs are the source's flow of its token's budget, as its passes are.
  const outcome = await withFlow(flowOf(config), () =>
    reconcileSource({
      target: targetOf(config),
      api,
      store: repos,
      failures: runtime.repos.failures,
      engine: { api: target.api, state: runtime.repos },
      logger: runtime.logger,
      repair: options.repair ?? false,
      trigger: options.trigger ?? 'cli',
      ...(options.onEstimate ? { onEstimate: options.onEstimate } : {}),
    }),
  );
  if (outcome.repaired) api.forget();
  return outcome;
}

/** How long `reconcile --repair` waits for a worker's job of the source to release its lock. */
export const SOURCE_LOCK_WAIT_MS = 60_000;

/**
 * Reconciles several sources one after the other, reading each list of the organization once.
 * A repair writes the records a pass writes: with Redis configured (the worker's), each source's
 * repair runs under the worker's source lock, so never during a pass, a retry or a reconciliation
 * job of that source; it waits up to `lockWaitMs` (default 60 s) for the lock, then fails with
 * `SOURCE_BUSY`. A report only reads and takes no lock.
 */
export async function reconcileSources(
  runtime: SyncRuntime,
  sourceIds: readonly string[],
  options: Omit<ReconcileOptions, 'api'> & { lockWaitMs?: number } = {},
): Promise<ReconcileOutcome[]> {
  const { lockWaitMs, ...reconcileOptions } = options;
  // One list of each organization per call, shared by its sources.
  const apis = new Map<string, ClientReconcileApi>();
  const apiOf = async (id: string) => {
    const config = runtime.loaded.config.sources.find((s) => s.id === id);
    if (!config) return undefined;
    const target = await runtime.targets.of(config);
    const key = `${target.connectionId}/${target.organizationId}`;
    let api = apis.get(key);
    if (!api) {
      api = new ClientReconcileApi(target.client, target.organizationId);
      apis.set(key, api);
    }
    return api;
  };
  const lock = options.repair ? sourceLockOf(runtime) : null;
  const outcomes: ReconcileOutcome[] = [];
  for (const id of sourceIds) {
    const lease = lock ? await waitForLock(runtime, lock, id, lockWaitMs ?? SOURCE_LOCK_WAIT_MS) : null;
    try {
      const api = await apiOf(id);
      outcomes.push(await reconcileWith(runtime, id, { ...reconcileOptions, ...(api ? { api } : {}) }));
    } finally {
      await lease?.release().catch(() => {});
    }
  }
  return outcomes;
}

/** The worker's source lock over the runtime's Redis (null without Redis: no worker to meet). */
function sourceLockOf(runtime: SyncRuntime): SourceLock | null {
  const settings = workerSettingsOf(runtime.loaded.config);
  if (!settings || !runtime.redis) return null;
  return new SourceLock({
    redis: runtime.redis,
    prefix: settings.prefix,
    ttlMs: settings.lockMs,
    logger: runtime.logger,
  });
}

async function waitForLock(runtime: SyncRuntime, lock: SourceLock, sourceId: string, waitMs: number) {
  const owner = `reconcile-cli:${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  const deadline = Date.now() + waitMs;
  let told = false;
  for (;;) {
    const lease = await lock.acquire(sourceId, owner, { pass: false });
    if (lease) return lease;
    if (Date.now() >= deadline)
      throw new AppError(
        'SOURCE_BUSY',
        `${sourceId}: a worker's job of this source (a pass, a retry or a reconciliation) still holds its lock after ${Math.round(waitMs / 1000)} s; repair it once that job ends`,
      );
    if (!told) {
      runtime.logger.warn(
        { sourceId, waitSeconds: Math.round(waitMs / 1000) },
        'a worker job of this source holds its lock: the repair waits for it',
      );
      told = true;
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(500, Math.max(0, deadline - Date.now()))));
  }
}

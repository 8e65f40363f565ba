import type { Logger } from 'pino';
import { messageOf } from '../domain/errors.js';
import { RECORD_KINDS, type RecordKind } from '../domain/records.js';
import type { SyncApi, SyncState } from '../sync/ports.js';
import { accountsToCheck, compareAccounts, compareDocuments, countDrift, driftOf } from './compare.js';
import type { ReconcileApi, ReconcileFailures, ReconciliationResult, ReconciliationStore } from './ports.js';
import { repairDrift } from './repair.js';
import { keyOf } from './repair-plan.js';
import type { DriftItem, MapEntry, ServiceAccount } from './types.js';

/** The source a reconciliation compares, as its configuration says. */
export interface ReconcileTarget {
  id: string;
  /** The connectionId of its linked accounts (default: its id). */
  connectionId: string;
  /** `reconcile.deleteOrphans`: a repair may unlink the connection's accounts no row claims. */
  deleteOrphans: boolean;
}

/** What a reconciliation costs at most in list requests, told before the first one. */
export interface ReconcileEstimate {
  sourceId: string;
  /** Records of each kind the record map holds. */
  records: Record<RecordKind, number>;
  /** List requests: one per 100 records of each kind, plus one per kind for the list's end. */
  listRequests: number;
}

export interface ReconcileSourceProps {
  target: ReconcileTarget;
  api: ReconcileApi;
  store: ReconciliationStore;
  failures: ReconcileFailures;
  /** The sync engine's ports a repair replays records through (the same client, the same limiter). */
  engine: { api: SyncApi; state: SyncState; concurrency?: number };
  logger: Logger;
  repair: boolean;
  /** `cli`, `schedule`, `dashboard`... (stored with the result). */
  trigger: string;
  onEstimate?: (estimate: ReconcileEstimate) => void;
}

/** A finished reconciliation of one source. */
export interface ReconcileOutcome extends ReconciliationResult {
  id: string;
  sourceId: string;
  repaired: boolean;
  estimate: ReconcileEstimate;
  /** List pages fetched (the bound the estimate gives). */
  listRequests: number;
  /** The records still drifted or held at the end, each named (held ones are `acknowledged`). */
  remaining: DriftItem[];
}

/**
 * Pages of 100: one request per 100 records, plus the empty page that ends a list (the spec's only
 * reliable end: a last page may carry a cursor).
 */
export const listRequestsFor = (records: number): number => Math.ceil(records / 100) + 1;

/**
 * Reconciles one source: lists what the service holds for its connection (accounts, invoices,
 * credit notes), compares it with the record map, and with `repair` fixes what the API allows
 * (see `repairDrift`). The result is stored per source (`reconciliations`), also when it fails.
 */
export async function reconcileSource(props: ReconcileSourceProps): Promise<ReconcileOutcome> {
  const { target, api, store } = props;
  const entries = await store.mapEntries(target.id);
  const estimate = estimateOf(target.id, entries);
  props.onEstimate?.(estimate);
  const id = await store.start(target.id, props.trigger, props.repair);
  const requestsBefore = api.requestCount();
  const pagesBefore = api.listPageCount();
  const logger = props.logger.child({ sourceId: target.id, reconciliationId: id });
  try {
    const items = await findDrift(props, entries);
    const listRequests = api.listPageCount() - pagesBefore;
    await acknowledgeHeld(props, items);
    let remaining = [...items];
    let repairs: Record<string, number> = {};
    if (props.repair && driftOf(items).length > 0) {
      const repaired = await repairDrift({ ...props, logger, entries, items });
      remaining = repaired.remaining;
      repairs = repaired.repairs;
    }
    const result: ReconciliationResult = {
      counts: countDrift(items),
      items,
      drift: driftOf(remaining).length,
      repairs,
      requests: api.requestCount() - requestsBefore,
    };
    await store.finish(id, result);
    logger.info(
      { event: 'reconcile.done', drift: result.drift, found: items.length, requests: result.requests },
      'reconciliation done',
    );
    return { ...result, id, sourceId: target.id, repaired: props.repair, estimate, listRequests, remaining };
  } catch (error) {
    await store.fail(id, messageOf(error), api.requestCount() - requestsBefore).catch(() => {});
    throw error;
  }
}

function estimateOf(sourceId: string, entries: readonly MapEntry[]): ReconcileEstimate {
  const records: Record<RecordKind, number> = { account: 0, invoice: 0, creditNote: 0 };
  for (const e of entries) records[e.kind]++;
  const listRequests = RECORD_KINDS.reduce((sum, kind) => sum + listRequestsFor(records[kind]), 0);
  return { sourceId, records, listRequests };
}

/** The lists, the GETs of accounts the list did not return, and the comparison. */
async function findDrift(props: ReconcileSourceProps, entries: readonly MapEntry[]): Promise<DriftItem[]> {
  const { api, target } = props;
  const ofKind = (kind: RecordKind) => entries.filter((e) => e.kind === kind);
  const accounts = ofKind('account');
  const listed = await api.listLinkedAccounts();
  const checked = new Map<string, ServiceAccount | null>();
  for (const accountId of accountsToCheck(accounts, listed))
    checked.set(accountId, await api.getAccount(accountId));
  const items = compareAccounts({ connectionId: target.connectionId, entries: accounts, listed, checked });
  const ourAccountIds = new Set(
    listed
      .filter((a) => a.source?.connectionId === target.connectionId && a.source.connectorType === 'Custom')
      .map((a) => a.id),
  );
  for (const kind of ['invoice', 'creditNote'] as const) {
    const docs = await api.listDocuments(kind);
    items.push(...compareDocuments({ kind, entries: ofKind(kind), listed: docs, ourAccountIds }));
  }
  return items;
}

/** Categories a repair can only record as a failure (frozen-only changes count too). */
export const isHeld = (item: DriftItem): boolean =>
  item.category === 'readOnly' ||
  item.category === 'orphan' ||
  (item.category === 'changed' && (item.fields ?? []).every((f) => f.frozen));

/**
 * Marks the held records an earlier repair recorded as failures (stage `reconcile`): named in the
 * report, no longer drift. Such failures of records no longer drifted at all are resolved.
 */
async function acknowledgeHeld(props: ReconcileSourceProps, items: DriftItem[]): Promise<void> {
  const recorded = await props.store.heldFailures(props.target.id);
  const recordedKeys = new Set(recorded.map((f) => keyOf(f.kind, f.sourceKey)));
  const drifted = new Set<string>();
  for (const item of items) {
    const key = keyOf(item.kind, item.sourceKey);
    drifted.add(key);
    if (isHeld(item) && recordedKeys.has(key)) item.acknowledged = true;
  }
  for (const kind of RECORD_KINDS) {
    const gone = recorded
      .filter((f) => f.kind === kind && !drifted.has(keyOf(kind, f.sourceKey)))
      .map((f) => f.sourceKey);
    if (gone.length > 0) await props.failures.resolve(props.target.id, kind, gone);
  }
}

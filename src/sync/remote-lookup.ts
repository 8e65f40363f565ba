import type { PassIdentity, PassLookups, PassPorts } from './pass-scope.js';
import type { DocumentKind, RemoteAccount, RemoteDocument } from './ports.js';

/** The API accepts at most 50 values in one filter condition. */
export const LOOKUP_BATCH = 50;

/** Splits a list into chunks of at most `size`. */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * Accounts of this pass's connection found by their source ids, in batches of 50. Only an account
 * whose `source` names this connection and the record's source id is taken, whatever else the
 * server returns for the filter.
 */
export function lookupAccounts(
  scope: PassIdentity & PassPorts,
  sourceIds: readonly string[],
): Promise<Map<string, RemoteAccount>> {
  return lookup(
    sourceIds,
    (batch) => scope.api.findAccountsBySourceIds(batch),
    (account) => (account.source?.connectionId === scope.connectionId ? account.source.sourceId : null),
  );
}

/**
 * The accounts of these source ids the service holds, however its `source` filter behaves: the
 * filter first (cheap), then, for the ids it did not find, every linked account of the organization
 * (`listLinkedAccounts`, read once per pass and kept), matched on `source.connectionId` +
 * `source.sourceId`. For the cases where the API said the account exists (a create refused as
 * "already linked") or where the record map cannot say (an invoice's account from another pass).
 */
export async function recoverAccounts(
  scope: PassIdentity & PassPorts & PassLookups,
  sourceIds: readonly string[],
): Promise<Map<string, RemoteAccount>> {
  const found = await lookupAccounts(scope, sourceIds);
  const missing = sourceIds.filter((id) => !found.has(id));
  if (missing.length === 0) return found;
  const linked = await scope.linkedAccounts.get();
  for (const id of missing) {
    const account = linked.get(id);
    if (account) found.set(id, account);
  }
  return found;
}

/**
 * The accounts of a pass's connection linked on the service, by source id: listed once, when
 * first needed, then kept for the pass (it serves recovery only: what the pass creates is in the
 * record map).
 */
export class LinkedAccounts {
  #listing: Promise<Map<string, RemoteAccount>> | undefined;

  constructor(
    private readonly list: () => Promise<RemoteAccount[]>,
    private readonly connectionId: string,
  ) {}

  get(): Promise<Map<string, RemoteAccount>> {
    this.#listing ??= this.list().then((accounts) => {
      const bySource = new Map<string, RemoteAccount>();
      for (const account of accounts)
        if (account.source?.connectionId === this.connectionId)
          bySource.set(account.source.sourceId, account);
      return bySource;
    });
    // A failed listing is not kept: the next need tries again.
    this.#listing.catch(() => {
      this.#listing = undefined;
    });
    return this.#listing;
  }
}

/** Documents of a kind found by their source ids, in batches of 50. */
export function lookupDocuments(
  scope: PassIdentity & PassPorts,
  kind: DocumentKind,
  sourceIds: readonly string[],
): Promise<Map<string, RemoteDocument>> {
  return lookup(
    sourceIds,
    (batch) => scope.api.findDocumentsBySourceIds(kind, batch),
    (doc) => doc.sourceId,
  );
}

/** What a lookup found, by the key each item answers for (null: not one of ours); keys not asked for are left out. */
async function lookup<T>(
  sourceIds: readonly string[],
  find: (batch: string[]) => Promise<T[]>,
  keyOf: (item: T) => string | null,
): Promise<Map<string, T>> {
  const found = new Map<string, T>();
  const wanted = new Set(sourceIds);
  for (const batch of chunks([...wanted], LOOKUP_BATCH)) {
    for (const item of await find(batch)) {
      const key = keyOf(item);
      if (key !== null && wanted.has(key)) found.set(key, item);
    }
  }
  return found;
}

/**
 * `PUT / PATCH / DELETE /accounts/{accountId}/source`: the account source transitions of the spec.
 *
 * | state                          | request                    | result                                  |
 * |--------------------------------|----------------------------|-----------------------------------------|
 * | none                           | PUT                        | linked, `Custom`, lastUpdate (or now)   |
 * | linked, same connection + id   | PUT                        | only lastUpdate changes                 |
 * | linked to another source       | PUT                        | 400 source-already-linked (unlink first)|
 * | linked                         | PATCH                      | lastUpdate (or now)                     |
 * | none                           | PATCH / DELETE             | 404 (source not linked)                 |
 * | linked `Custom`                | DELETE                     | none, lastUnlinkedSource set            |
 * | linked to a connector          | PUT / PATCH / DELETE       | 400 managed-action-forbidden            |
 */

import type { FastifyInstance } from 'fastify';
import { authOf, requires, type SandboxDeps } from '../context.js';
import { ApiError, notFound } from '../errors.js';
import type { Account, SourceRef } from '../model.js';
import { ACCOUNTS_WRITE } from '../oauth/scopes.js';
import { accountJson } from '../resources/account-view.js';
import { assertWritable, auditAccountCommand, managedActionForbidden } from '../resources/guards.js';
import {
  datetimeInput,
  type Fields,
  objectBody,
  rejectUnknownFields,
  requiredText,
} from '../resources/input.js';
import type { SandboxStore } from '../store.js';

export const CUSTOM_CONNECTOR = 'Custom';
export const DUPLICATE_SOURCE = 'app-invoicing.account.duplicate-source';
export const SOURCE_ALREADY_LINKED = 'app-invoicing.account.source-already-linked';

/** `{connectionId, sourceId, lastUpdate?}` as a new `Custom` source reference; `field` prefixes messages. */
export function customSourceInput(value: unknown, now: string, field?: string): SourceRef {
  const prefix = field ? `${field}.` : '';
  const body = objectBody(value, field ?? 'request body');
  rejectUnknownFields(body, ['connectionId', 'sourceId', 'lastUpdate'], prefix);
  return {
    connectionId: opaqueId(body.connectionId, `${prefix}connectionId`),
    // Ids are opaque: kept exactly as sent (no trimming), only a blank one is refused.
    sourceId: opaqueId(body.sourceId, `${prefix}sourceId`),
    connectorType: CUSTOM_CONNECTOR,
    lastUpdate: datetimeInput(body.lastUpdate, `${prefix}lastUpdate`, now),
  };
}

function opaqueId(value: unknown, field: string): string {
  requiredText(value, field);
  return value as string;
}

/** A source is unique per connection within an organization: refuses one used by another account. */
export function assertSourceFree(
  store: SandboxStore,
  organizationId: string,
  ref: SourceRef,
  self?: string,
): void {
  for (const other of store.accounts.values()) {
    const source = other.source;
    if (other.id === self || other.organizationId !== organizationId || !source) continue;
    if (source.connectionId === ref.connectionId && source.sourceId === ref.sourceId) {
      throw new ApiError(
        400,
        DUPLICATE_SOURCE,
        `source ${ref.connectionId}/${ref.sourceId} is already linked to account ${other.id}`,
      );
    }
  }
}

/** Source endpoints act on `Custom` sources only; connector-managed accounts are refused. */
function assertCustomManaged(account: Account): void {
  if (account.source && account.source.connectorType !== CUSTOM_CONNECTOR) {
    throw managedActionForbidden('This account', account.source.connectorType);
  }
  assertWritable(account, 'This account');
}

const sameSource = (a: SourceRef, b: SourceRef) =>
  a.connectionId === b.connectionId && a.sourceId === b.sourceId;

function linkedSource(account: Account): SourceRef {
  if (!account.source) throw notFound('Source (the account has no linked source)');
  return account.source;
}

export function registerAccountSourceRoutes(app: FastifyInstance, deps: SandboxDeps): void {
  const { store } = deps;
  const accountOf = (params: unknown, userId: string) =>
    store.accountFor((params as { accountId: string }).accountId, userId);

  app.put('/accounts/:accountId/source', requires(ACCOUNTS_WRITE), async (request) => {
    const account = accountOf(request.params, authOf(request).userId);
    const wanted = customSourceInput(request.body, store.nowIso());
    assertCustomManaged(account);
    const current = account.source;
    if (current && !sameSource(current, wanted)) {
      throw new ApiError(
        400,
        SOURCE_ALREADY_LINKED,
        `the account is linked to ${current.connectionId}/${current.sourceId}; unlink it (DELETE /accounts/${account.id}/source) before linking another source`,
      );
    }
    if (current) {
      current.lastUpdate = wanted.lastUpdate;
    } else {
      assertSourceFree(store, account.organizationId, wanted, account.id);
      account.source = wanted;
    }
    account.updatedAt = store.nowIso();
    auditAccountCommand(deps, request, account, current ? 'UpdateAccountSource' : 'LinkAccountSource', {
      source: { ...wanted },
    });
    return accountJson(store, account);
  });

  app.patch('/accounts/:accountId/source', requires(ACCOUNTS_WRITE), async (request) => {
    const account = accountOf(request.params, authOf(request).userId);
    const body: Fields = request.body === undefined || request.body === null ? {} : objectBody(request.body);
    rejectUnknownFields(body, ['lastUpdate']);
    const lastUpdate = datetimeInput(body.lastUpdate, 'lastUpdate', store.nowIso());
    const source = linkedSource(account);
    assertCustomManaged(account);
    source.lastUpdate = lastUpdate;
    account.updatedAt = store.nowIso();
    auditAccountCommand(deps, request, account, 'UpdateAccountSource', { source: { ...source } });
    return accountJson(store, account);
  });

  app.delete('/accounts/:accountId/source', requires(ACCOUNTS_WRITE), async (request, reply) => {
    const account = accountOf(request.params, authOf(request).userId);
    const source = linkedSource(account);
    assertCustomManaged(account);
    account.lastUnlinkedSource = source;
    account.source = null;
    account.updatedAt = store.nowIso();
    auditAccountCommand(deps, request, account, 'UnlinkAccountSource', { source: { ...source } });
    return reply.code(204).send();
  });
}

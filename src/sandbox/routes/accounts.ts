/** Accounts: create, read, update, delete; the list, source and tag routes live beside this file. */

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { authOf, requires, type SandboxDeps } from '../context.js';
import { badRequest } from '../errors.js';
import type { Account } from '../model.js';
import { ACCOUNTS_READ, ACCOUNTS_WRITE } from '../oauth/scopes.js';
import { accountJson } from '../resources/account-view.js';
import { assertWritable, auditAccountCommand } from '../resources/guards.js';
import {
  addressInput,
  currencyCodeInput,
  type Fields,
  isUuid,
  objectBody,
  rejectUnknownFields,
  requiredText,
} from '../resources/input.js';
import type { SandboxStore } from '../store.js';
import { registerAccountListRoute } from './account-list.js';
import { assertSourceFree, customSourceInput, registerAccountSourceRoutes } from './account-source.js';
import { registerAccountTagRoutes } from './account-tags.js';

const CREATE_FIELDS = ['organizationId', 'fullName', 'currencyCode', 'billingAddress', 'source'] as const;
const UPDATE_FIELDS = ['fullName', 'currencyCode', 'billingAddress'] as const;

/** Routes of this area, registered under /api/public/v1. */
export function registerAccountRoutes(app: FastifyInstance, deps: SandboxDeps): void {
  const { store } = deps;
  const accountOf = (request: FastifyRequest) =>
    store.accountFor((request.params as { accountId: string }).accountId, authOf(request).userId);

  registerAccountListRoute(app, deps);

  app.post('/accounts', requires(ACCOUNTS_WRITE), async (request, reply) => {
    const account = newAccount(store, objectBody(request.body), authOf(request).userId);
    store.accounts.set(account.id, account);
    auditAccountCommand(deps, request, account, 'CreateAccount', { source: account.source });
    return reply.code(201).send(accountJson(store, account));
  });

  app.get('/accounts/:accountId', requires(ACCOUNTS_READ), async (request) =>
    accountJson(store, accountOf(request)),
  );

  app.put('/accounts/:accountId', requires(ACCOUNTS_WRITE), async (request) => {
    const account = accountOf(request);
    const changes = accountChanges(objectBody(request.body));
    assertWritable(account, 'This account');
    Object.assign(account, changes, { updatedAt: store.nowIso() });
    auditAccountCommand(deps, request, account, 'UpdateAccount', { changed: Object.keys(changes) });
    return accountJson(store, account);
  });

  app.delete('/accounts/:accountId', requires(ACCOUNTS_WRITE), async (request, reply) => {
    const account = accountOf(request);
    assertWritable(account, 'This account');
    const removed = deleteAccount(store, account);
    auditAccountCommand(deps, request, account, 'DeleteAccount', removed);
    return reply.code(204).send();
  });

  registerAccountSourceRoutes(app, deps);
  registerAccountTagRoutes(app, deps);
}

/** Validates a creation body into a new account (not stored yet); the source is linked as `Custom`. */
function newAccount(store: SandboxStore, body: Fields, userId: string): Account {
  rejectUnknownFields(body, CREATE_FIELDS);
  if (body.organizationId === undefined) throw badRequest('organizationId is required');
  if (!isUuid(body.organizationId)) throw badRequest('organizationId must be a uuid');
  const organization = store.organizationFor(body.organizationId, userId);
  const fullName = requiredText(body.fullName, 'fullName');
  const currencyCode = currencyCodeInput(body.currencyCode);
  const billingAddress = addressInput(body.billingAddress);
  const now = store.nowIso();
  const source =
    body.source === undefined || body.source === null ? null : customSourceInput(body.source, now, 'source');
  if (source) assertSourceFree(store, organization.id, source);
  return {
    id: store.newId(),
    organizationId: organization.id,
    fullName,
    currencyCode,
    billingAddress,
    source,
    lastUnlinkedSource: null,
    readOnlyReason: null,
    tagIds: [],
    dunningPaused: false,
    paymentMethod: null,
    collectiveProceeding: 'Unknown',
    hasPaymentSchedule: false,
    createdAt: now,
    updatedAt: now,
  };
}

/** The fields a PUT changes: only those present; `billingAddress` is replaced as a whole. */
function accountChanges(body: Fields): Partial<Account> {
  rejectUnknownFields(body, UPDATE_FIELDS);
  const changes: Partial<Account> = {};
  if (body.fullName !== undefined) changes.fullName = requiredText(body.fullName, 'fullName');
  if (body.currencyCode !== undefined) changes.currencyCode = currencyCodeInput(body.currencyCode);
  if (body.billingAddress !== undefined) changes.billingAddress = addressInput(body.billingAddress);
  if (Object.keys(changes).length === 0) {
    throw badRequest(`the body must carry at least one of ${UPDATE_FIELDS.join(', ')}`);
  }
  return changes;
}

/**
 * Deletes the account with its documents and tasks. Communications survive, marked with the
 * deletion time; audit entries keep the account's id and name.
 */
function deleteAccount(store: SandboxStore, account: Account) {
  const now = store.nowIso();
  let documents = 0;
  let tasks = 0;
  for (const [id, doc] of store.documents) {
    if (doc.accountId === account.id && store.documents.delete(id)) documents += 1;
  }
  for (const [id, task] of store.tasks) {
    if (task.accountId === account.id && store.tasks.delete(id)) tasks += 1;
  }
  for (const communication of store.communications.values()) {
    if (communication.accountId === account.id) {
      communication.accountDeletedAt = now;
      communication.accountName = account.fullName;
    }
  }
  store.accounts.delete(account.id);
  return { deletedDocuments: documents, deletedTasks: tasks, source: account.source };
}

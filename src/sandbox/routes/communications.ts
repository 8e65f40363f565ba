import type { FastifyInstance, FastifyRequest } from 'fastify';
import { authOf, requires, type SandboxDeps } from '../context.js';
import { notFound } from '../errors.js';
import { listPage } from '../lists/index.js';
import type { Communication } from '../model.js';
import { COMMUNICATIONS_READ } from '../oauth/scopes.js';
import type { SandboxStore } from '../store.js';
import { listQueryOf, optionalUuidParam, organizationOfQuery, queryOf } from './balance-query.js';
import {
  communicationJson,
  communicationList,
  type JoinedCommunication,
  joinCommunication,
  scopedCommunicationJson,
} from './communication-lists.js';
import { registerTaskRoutes } from './tasks.js';

/** Which communications a channel-scoped list shows. */
interface Channel {
  direction?: Communication['direction'];
  channel?: Communication['channel'];
}

/**
 * Organization-wide channel lists (`organizationId` required, `accountId` optional). The spec only
 * names them; in the sandbox "emails" and "email communications" are the same e-mail records.
 */
const CHANNEL_LISTS: Readonly<Record<string, Channel>> = {
  '/emails': { channel: 'Email' },
  '/incoming-emails': { channel: 'Email', direction: 'Incoming' },
  '/outgoing-emails': { channel: 'Email', direction: 'Outgoing' },
  '/incoming-email-communications': { channel: 'Email', direction: 'Incoming' },
  '/outgoing-email-communications': { channel: 'Email', direction: 'Outgoing' },
};

const ACCOUNT_LISTS: Readonly<Record<string, Channel>> = {
  'incoming-email-communications': { channel: 'Email', direction: 'Incoming' },
  'outgoing-email-communications': { channel: 'Email', direction: 'Outgoing' },
};

const inChannel = (item: Communication, wanted: Channel): boolean =>
  (wanted.channel === undefined || item.channel === wanted.channel) &&
  (wanted.direction === undefined || item.direction === wanted.direction);

/** Communications matching `keep`, joined to their accounts. */
function joined(store: SandboxStore, keep: (item: Communication) => boolean): JoinedCommunication[] {
  return [...store.communications.values()].filter(keep).map((item) => joinCommunication(store, item));
}

/** The organization and optional account filter of an organization-wide list. */
function organizationScope(request: FastifyRequest, deps: SandboxDeps) {
  const organization = organizationOfQuery(request, deps);
  const accountId = optionalUuidParam(queryOf(request).accountId, 'accountId');
  return (item: Communication) =>
    item.organizationId === organization.id && (accountId === undefined || item.accountId === accountId);
}

/**
 * The organization of an account-scoped list. Communications survive their account, so a deleted
 * account's list still answers while the caller can see one of its communications; 404 otherwise.
 */
function accountScope(request: FastifyRequest, deps: SandboxDeps): string {
  const { accountId } = request.params as { accountId: string };
  const userId = authOf(request).userId;
  if (deps.store.accounts.has(accountId)) return deps.store.accountFor(accountId, userId).id;
  for (const item of deps.store.communications.values()) {
    if (item.accountId === accountId && deps.store.isMember(item.organizationId, userId)) return accountId;
  }
  throw notFound('Account');
}

/** Routes of this area, registered under /api/public/v1. */
export function registerCommunicationRoutes(app: FastifyInstance, deps: SandboxDeps): void {
  const { store } = deps;
  const all = communicationList('/communications');
  app.get('/communications', requires(COMMUNICATIONS_READ), async (request) => {
    const rows = joined(store, organizationScope(request, deps));
    return listPage(all, rows, listQueryOf(request), communicationJson);
  });

  for (const [path, channel] of Object.entries(CHANNEL_LISTS)) {
    const def = communicationList(path);
    app.get(path, requires(COMMUNICATIONS_READ), async (request) => {
      const inScope = organizationScope(request, deps);
      const rows = joined(store, (item) => inScope(item) && inChannel(item, channel));
      return listPage(def, rows, listQueryOf(request), scopedCommunicationJson);
    });
  }

  for (const [suffix, channel] of Object.entries(ACCOUNT_LISTS)) {
    const def = communicationList(`/accounts/{accountId}/${suffix}`);
    app.get(`/accounts/:accountId/${suffix}`, requires(COMMUNICATIONS_READ), async (request) => {
      const accountId = accountScope(request, deps);
      const rows = joined(store, (item) => item.accountId === accountId && inChannel(item, channel));
      return listPage(def, rows, listQueryOf(request), scopedCommunicationJson);
    });
  }

  registerTaskRoutes(app, deps);
}

/**
 * `POST /accounts/{accountId}/tags` and `DELETE /accounts/{accountId}/tags/{tagId}`.
 * Body of the POST: `{"tagIds": ["<tag id>", ...]}`. Tags are applied one by one in order; the
 * first unknown tag stops the request with 404 and the tags before it stay attached.
 */

import type { FastifyInstance } from 'fastify';
import { authOf, requires, type SandboxDeps } from '../context.js';
import { badRequest, notFound } from '../errors.js';
import type { Account, Tag } from '../model.js';
import { ACCOUNTS_WRITE } from '../oauth/scopes.js';
import { auditAccountCommand } from '../resources/guards.js';
import { objectBody, rejectUnknownFields } from '../resources/input.js';
import type { SandboxStore } from '../store.js';

const MAX_TAGS_PER_REQUEST = 100;

function tagIdsInput(body: unknown): string[] {
  const fields = objectBody(body);
  rejectUnknownFields(fields, ['tagIds']);
  const { tagIds } = fields;
  if (!Array.isArray(tagIds) || tagIds.length === 0 || !tagIds.every((id) => typeof id === 'string')) {
    throw badRequest('tagIds must be a non-empty array of tag ids (strings)');
  }
  if (tagIds.length > MAX_TAGS_PER_REQUEST) {
    throw badRequest(`tagIds holds ${tagIds.length} ids; the limit is ${MAX_TAGS_PER_REQUEST}`);
  }
  return tagIds;
}

/** A tag the account's organization can use (its own custom tags and the predefined ones). */
function usableTag(store: SandboxStore, account: Account, tagId: string): Tag | undefined {
  const tag = store.tags.get(tagId);
  const usable = tag && (tag.organizationId === null || tag.organizationId === account.organizationId);
  return usable ? tag : undefined;
}

export function registerAccountTagRoutes(app: FastifyInstance, deps: SandboxDeps): void {
  const { store } = deps;

  app.post('/accounts/:accountId/tags', requires(ACCOUNTS_WRITE), async (request, reply) => {
    const { accountId } = request.params as { accountId: string };
    const account = store.accountFor(accountId, authOf(request).userId);
    const attached: string[] = [];
    const record = () => {
      account.updatedAt = store.nowIso();
      auditAccountCommand(deps, request, account, 'AssignAccountTags', { tagIds: attached });
    };
    for (const tagId of tagIdsInput(request.body)) {
      if (!usableTag(store, account, tagId)) {
        // The tags attached so far stay attached: the change is real, so it is journaled too.
        if (attached.length > 0) record();
        throw notFound(`Tag ${tagId}`);
      }
      if (account.tagIds.includes(tagId)) continue;
      account.tagIds.push(tagId);
      attached.push(tagId);
    }
    record();
    return reply.code(204).send();
  });

  app.delete('/accounts/:accountId/tags/:tagId', requires(ACCOUNTS_WRITE), async (request, reply) => {
    const { accountId, tagId } = request.params as { accountId: string; tagId: string };
    const account = store.accountFor(accountId, authOf(request).userId);
    const index = account.tagIds.indexOf(tagId);
    // Detaching a tag the account does not carry is already done: 204, nothing changes.
    if (index >= 0) {
      account.tagIds.splice(index, 1);
      account.updatedAt = store.nowIso();
    }
    auditAccountCommand(deps, request, account, 'UnassignAccountTag', { tagId, changed: index >= 0 });
    return reply.code(204).send();
  });
}

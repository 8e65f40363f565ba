import type { FastifyInstance, FastifyRequest } from 'fastify';
import { actorOf, authOf, requires, type SandboxDeps } from '../context.js';
import { ApiError, badRequest } from '../errors.js';
import type { Tag } from '../model.js';
import { ACCOUNTS_READ, ACCOUNTS_WRITE } from '../oauth/scopes.js';
import { objectBody, requiredText } from './organizations-validation.js';
import { tagView } from './organizations-views.js';

/** Tags of an organization: its custom tags and the predefined ones (scopes `accounts:*`). */

const MAX_TAG_NAME = 50;
const COLOR_RE = /^#[0-9a-fA-F]{6}$/;

function parseColor(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || !COLOR_RE.test(value)) {
    throw badRequest('color must be a hex colour such as #1A2B3C, or null');
  }
  return value.toUpperCase();
}

/** Predefined tags first, then custom tags by name. */
const byKindThenName = (a: Tag, b: Tag) =>
  (a.kind === b.kind ? 0 : a.kind === 'Predefined' ? -1 : 1) || a.name.localeCompare(b.name);

export function registerTagRoutes(app: FastifyInstance, deps: SandboxDeps): void {
  const { store } = deps;
  const orgOf = (request: FastifyRequest) =>
    store.organizationFor(
      (request.params as { organizationId: string }).organizationId,
      authOf(request).userId,
    );

  app.get('/organizations/:organizationId/tags', requires(ACCOUNTS_READ), async (request) =>
    store.tagsOf(orgOf(request).id).sort(byKindThenName).map(tagView),
  );

  app.post('/organizations/:organizationId/tags', requires(ACCOUNTS_WRITE), async (request, reply) => {
    const org = orgOf(request);
    const input = objectBody(request.body, ['name', 'color']);
    if (input.name === undefined) throw badRequest('name is required');
    const name = requiredText(input.name, 'name', MAX_TAG_NAME);
    const color = parseColor(input.color);
    // A name must be unique among the tags the organization can use, predefined ones included.
    const taken = store.tagsOf(org.id).some((t) => t.name.toLowerCase() === name.toLowerCase());
    if (taken) throw new ApiError(400, 'TAG_DUPLICATE_NAME', `A tag named "${name}" already exists`);
    const tag: Tag = { id: store.newId(), organizationId: org.id, name, kind: 'Custom', color };
    store.tags.set(tag.id, tag);
    store.audit(org.id, actorOf(request, deps), 'CreateTag', { metadata: { tagId: tag.id, name, color } });
    return reply.code(201).send(tagView(tag));
  });
}

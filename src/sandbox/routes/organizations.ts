import type { FastifyInstance, FastifyRequest } from 'fastify';
import { actorOf, authOf, requires, type SandboxDeps } from '../context.js';
import { notFound } from '../errors.js';
import { type ListDefinition, listPage } from '../lists/index.js';
import type { Organization } from '../model.js';
import { ORGANIZATIONS_READ, ORGANIZATIONS_WRITE } from '../oauth/scopes.js';
import { imageFromUpload } from './images.js';
import { registerAuditRoute } from './organizations-audit.js';
import { registerMemberRoutes } from './organizations-members.js';
import { applySettings, parseSettingsUpdate } from './organizations-settings.js';
import { registerTagRoutes } from './organizations-tags.js';
import { domainName, nonEmptyObjectBody, requiredText } from './organizations-validation.js';
import { organizationView } from './organizations-views.js';

/** `GET /organizations`: cursor list without filters or sorts, oldest organization first. */
const ORGANIZATION_LIST: ListDefinition<Organization> = {
  endpoint: '/organizations',
  filters: {},
  defaultOrder: (a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id),
  historical: false,
};

const MAX_NAME = 200;

/** The fields an organization update asks for; `emailDomainName: null` removes the domain. */
function parseOrganizationUpdate(body: unknown): Partial<Pick<Organization, 'name' | 'emailDomainName'>> {
  const input = nonEmptyObjectBody(body, ['name', 'emailDomainName']);
  const update: Partial<Pick<Organization, 'name' | 'emailDomainName'>> = {};
  if ('name' in input) update.name = requiredText(input.name, 'name', MAX_NAME);
  if ('emailDomainName' in input) {
    update.emailDomainName =
      input.emailDomainName === null ? null : domainName(input.emailDomainName, 'emailDomainName');
  }
  return update;
}

/** Routes of this area, registered under /api/public/v1. */
export function registerOrganizationRoutes(app: FastifyInstance, deps: SandboxDeps): void {
  const { store } = deps;
  const orgOf = (request: FastifyRequest) =>
    store.organizationFor(
      (request.params as { organizationId: string }).organizationId,
      authOf(request).userId,
    );

  app.get('/organizations', requires(ORGANIZATIONS_READ), async (request) =>
    listPage(
      ORGANIZATION_LIST,
      store.organizationsOf(authOf(request).userId),
      request.query as Record<string, string>,
      organizationView,
    ),
  );

  app.get('/organizations/:organizationId', requires(ORGANIZATIONS_READ), async (request) =>
    organizationView(orgOf(request)),
  );

  app.put('/organizations/:organizationId', requires(ORGANIZATIONS_WRITE), async (request) => {
    const org = orgOf(request);
    const update = parseOrganizationUpdate(request.body);
    Object.assign(org, update);
    store.audit(org.id, actorOf(request, deps), 'UpdateOrganization', { metadata: { ...update } });
    return organizationView(org);
  });

  app.put('/organizations/:organizationId/logo', requires(ORGANIZATIONS_WRITE), async (request) => {
    const org = orgOf(request);
    org.logo = imageFromUpload(request.body);
    store.audit(org.id, actorOf(request, deps), 'UploadOrganizationLogo', {
      metadata: { mimeType: org.logo.mimeType, size: org.logo.bytes.length },
    });
    return organizationView(org);
  });

  app.delete('/organizations/:organizationId/logo', requires(ORGANIZATIONS_WRITE), async (request) => {
    const org = orgOf(request);
    if (!org.logo) throw notFound('Organization logo');
    org.logo = null;
    store.audit(org.id, actorOf(request, deps), 'DeleteOrganizationLogo');
    return organizationView(org);
  });

  app.put('/organizations/:organizationId/settings', requires(ORGANIZATIONS_WRITE), async (request) => {
    const org = orgOf(request);
    const update = parseSettingsUpdate(request.body);
    applySettings(org, update);
    store.audit(org.id, actorOf(request, deps), 'UpdateOrganizationSettings', {
      metadata: { fields: Object.keys(update) },
    });
    return organizationView(org);
  });

  registerAuditRoute(app, deps);
  registerMemberRoutes(app, deps);
  registerTagRoutes(app, deps);
}

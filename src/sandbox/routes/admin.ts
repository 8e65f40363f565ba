import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { SandboxDeps } from '../context.js';
import { ApiError, badRequest, notFound } from '../errors.js';
import type { Account, AccountTask, AuditEntry, Communication, DocumentRecord } from '../model.js';
import { ALL_SCOPES, isScope, type Scope } from '../oauth/scopes.js';
import type { FaultConfig } from '../options.js';

/**
 * `/__sandbox/*`: test and demo controls that are not part of the Public API (faults, tokens,
 * records a real service would get from connectors or the web application). They need the admin
 * token the sandbox prints at start.
 */
export function registerAdminRoutes(app: FastifyInstance, deps: SandboxDeps): void {
  const { store } = deps;
  const adminToken = deps.options.adminToken ?? `sbx_admin_${randomBytes(18).toString('base64url')}`;
  deps.options.adminToken = adminToken;

  app.register(
    async (admin) => {
      admin.addHook('onRequest', async (request: FastifyRequest) => {
        if (request.headers.authorization !== `Bearer ${adminToken}`) {
          throw new ApiError(401, 'UNAUTHORIZED', 'The sandbox admin token is required');
        }
      });

      admin.get('/faults', async () => deps.faults.config);
      admin.put('/faults', async (request) =>
        deps.faults.update((request.body ?? {}) as Partial<FaultConfig>),
      );

      admin.post('/tokens', async (request) => {
        const body = (request.body ?? {}) as {
          userId?: string;
          scopes?: string[];
          clientId?: string;
          withRefreshToken?: boolean;
        };
        const scopes = (body.scopes ?? [...ALL_SCOPES]).filter(isScope) as Scope[];
        const userId = body.userId ?? [...store.users.values()][0]!.id;
        if (!store.users.has(userId)) throw notFound('User');
        const grant = { clientId: body.clientId ?? deps.options.clientIds[0]!, userId, scopes };
        if (body.withRefreshToken) return deps.tokens.issue(grant);
        return { accessToken: deps.tokens.mintStatic(grant), scopes };
      });

      admin.post('/users', async (request) => {
        const body = (request.body ?? {}) as { email?: string; fullName?: string; active?: boolean };
        if (!body.email) throw badRequest('email is required');
        return store.addUser(body.email, body.fullName ?? body.email, { active: body.active ?? true });
      });
      admin.put('/users/:userId/notification-preferences', async (request) => {
        const user = store.users.get((request.params as { userId: string }).userId);
        if (!user) throw notFound('User');
        user.notificationPreferences = request.body as typeof user.notificationPreferences;
        return user;
      });

      admin.post('/organizations', async (request) => {
        const body = (request.body ?? {}) as {
          name?: string;
          emailDomainName?: string;
          memberUserIds?: string[];
        };
        const org = store.addOrganization(body.name ?? 'Other Org', body.emailDomainName ?? null);
        for (const userId of body.memberUserIds ?? []) store.addMember(org.id, userId);
        return org;
      });

      admin.post('/accounts', async (request) => {
        const body = (request.body ?? {}) as Partial<Account> & { organizationId: string };
        const now = store.nowIso();
        const account: Account = {
          id: store.newId(),
          fullName: 'Seeded account',
          currencyCode: 'EUR',
          billingAddress: { street: null, city: null, postalCode: null, country: null },
          source: null,
          lastUnlinkedSource: null,
          readOnlyReason: null,
          tagIds: [],
          dunningPaused: false,
          paymentMethod: null,
          collectiveProceeding: 'No',
          hasPaymentSchedule: false,
          createdAt: now,
          updatedAt: now,
          ...body,
        };
        store.accounts.set(account.id, account);
        return account;
      });

      admin.post('/documents', async (request) => {
        const body = (request.body ?? {}) as Partial<DocumentRecord> & { accountId: string };
        const account = store.accounts.get(body.accountId);
        if (!account) throw notFound('Account');
        const now = store.nowIso();
        const doc: DocumentRecord = {
          id: store.newId(),
          kind: 'invoice',
          organizationId: account.organizationId,
          number: `SEED-${store.documents.size + 1}`,
          issuedDate: { year: 2026, month: 1, day: 1 },
          dueDate: body.kind === 'creditNote' ? null : { year: 2026, month: 1, day: 31 },
          totalAmount: '100.00',
          taxAmount: '0.00',
          paidAmount: '0.00',
          billingAddress: account.billingAddress,
          file: null,
          sourceId: null,
          channel: 'Manual',
          connectionId: null,
          readOnlyReason: null,
          paymentMethod: null,
          paymentSchedule: false,
          tagIds: [],
          createdAt: now,
          updatedAt: now,
          ...body,
        };
        store.documents.set(doc.id, doc);
        return { ...doc, file: undefined };
      });

      // What the web application and connectors do to existing records (a reconciliation's test
      // cases): link an account to a connector, set a readOnlyReason; delete a document by hand.
      admin.patch('/accounts/:accountId', async (request) => {
        const account = store.accounts.get((request.params as { accountId: string }).accountId);
        if (!account) throw notFound('Account');
        const body = (request.body ?? {}) as Partial<Pick<Account, 'source' | 'readOnlyReason' | 'fullName'>>;
        Object.assign(account, body, { updatedAt: store.nowIso() });
        return account;
      });
      admin.delete('/documents/:documentId', async (request, reply) => {
        if (!store.documents.delete((request.params as { documentId: string }).documentId))
          throw notFound('Document');
        return reply.status(204).send();
      });

      admin.post('/communications', async (request) => {
        const body = request.body as Partial<Communication> & { accountId: string };
        const account = store.accounts.get(body.accountId);
        if (!account) throw notFound('Account');
        const item: Communication = {
          id: store.newId(),
          organizationId: account.organizationId,
          accountName: account.fullName,
          accountDeletedAt: null,
          contactId: null,
          contactName: null,
          direction: 'Outgoing',
          channel: 'Email',
          status: 'Sent',
          deliveryStatus: 'Delivered',
          subject: null,
          communicationAt: store.nowIso(),
          ...body,
        };
        store.communications.set(item.id, item);
        return item;
      });

      admin.post('/tasks', async (request) => {
        const body = request.body as Partial<AccountTask> & { accountId: string };
        const account = store.accounts.get(body.accountId);
        if (!account) throw notFound('Account');
        const now = store.nowIso();
        const task: AccountTask = {
          id: store.newId(),
          organizationId: account.organizationId,
          title: 'Call the customer',
          status: 'Todo',
          type: 'Call',
          tagIds: [],
          balance: '0.00',
          createdAt: now,
          updatedAt: now,
          ...body,
        };
        store.tasks.set(task.id, task);
        return task;
      });

      admin.post('/audit', async (request) => {
        const body = request.body as Pick<AuditEntry, 'organizationId' | 'action' | 'actor'> &
          Partial<AuditEntry>;
        return store.audit(body.organizationId, body.actor, body.action, body);
      });

      admin.get('/stats', async () => ({
        accounts: store.accounts.size,
        invoices: [...store.documents.values()].filter((d) => d.kind === 'invoice').length,
        creditNotes: [...store.documents.values()].filter((d) => d.kind === 'creditNote').length,
        tokenGrants: deps.tokens.issuedCount,
      }));
    },
    { prefix: '/__sandbox' },
  );
}

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { actorOf, authOf, requires, type SandboxDeps } from '../context.js';
import { ApiError, badRequest, notFound } from '../errors.js';
import type { Invitation, Member, Organization } from '../model.js';
import { ORGANIZATIONS_READ, ORGANIZATIONS_WRITE } from '../oauth/scopes.js';
import { emailAddress, objectBody } from './organizations-validation.js';
import {
  type InvitationStatus,
  type InvitationView,
  invitationStatus,
  invitationView,
  type MemberView,
  memberView,
} from './organizations-views.js';

/** Members and invitations of an organization. */

const DAY_MS = 24 * 3600 * 1000;
const ROLES: readonly Member['role'][] = ['Admin', 'Member'];

/** The 201 answer of an invitation: accepted at once (with the new member) or pending. */
export interface InvitationResult {
  status: InvitationStatus;
  invitation: InvitationView;
  member: MemberView | null;
}

function parseInvitation(body: unknown): { email: string; role: Member['role'] } {
  const input = objectBody(body, ['email', 'role']);
  if (input.email === undefined) throw badRequest('email is required');
  const email = emailAddress(input.email);
  const role = input.role ?? 'Member';
  if (!ROLES.includes(role as Member['role'])) throw badRequest(`role must be one of ${ROLES.join(', ')}`);
  return { email, role: role as Member['role'] };
}

const sameEmail = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

export function registerMemberRoutes(app: FastifyInstance, deps: SandboxDeps): void {
  const { store } = deps;
  const clock = deps.options.clock;
  const orgOf = (request: FastifyRequest) =>
    store.organizationFor(
      (request.params as { organizationId: string }).organizationId,
      authOf(request).userId,
    );

  /** The invitation of `email` that can still be accepted or cancelled (pending, not expired). */
  const openInvitation = (organizationId: string, email: string) =>
    store.invitations.find(
      (i) =>
        i.organizationId === organizationId &&
        sameEmail(i.email, email) &&
        invitationStatus(i, clock) === 'Pending',
    );

  const membersView = (org: Organization): MemberView[] =>
    store.members
      .filter((m) => m.organizationId === org.id)
      .sort((a, b) => a.joinedAt.localeCompare(b.joinedAt))
      .flatMap((m) => {
        const user = store.users.get(m.userId);
        return user ? [memberView(m, user)] : [];
      });

  app.get('/organizations/:organizationId/members', requires(ORGANIZATIONS_READ), async (request) =>
    membersView(orgOf(request)),
  );

  app.delete(
    '/organizations/:organizationId/members/:userId',
    requires(ORGANIZATIONS_WRITE),
    async (request, reply) => {
      const org = orgOf(request);
      const { userId } = request.params as { userId: string };
      const index = store.members.findIndex((m) => m.organizationId === org.id && m.userId === userId);
      if (index < 0) throw notFound('Member');
      store.members.splice(index, 1);
      const user = store.users.get(userId);
      store.audit(org.id, actorOf(request, deps), 'RemoveMember', {
        metadata: { userId, email: user?.email ?? null, fullName: user?.fullName ?? null },
      });
      return reply.code(204).send();
    },
  );

  /**
   * An existing active user becomes a member at once; anyone else gets a pending invitation that
   * expires after `invitationLifetimeDays`. Re-inviting a pending address renews that invitation.
   */
  app.post(
    '/organizations/:organizationId/invitations',
    requires(ORGANIZATIONS_WRITE),
    async (request, reply) => {
      const org = orgOf(request);
      const { email, role } = parseInvitation(request.body);
      const user = store.userByEmail(email);
      if (user && store.isMember(org.id, user.id)) {
        throw new ApiError(400, 'MEMBER_ALREADY_EXISTS', `${email} is already a member of this organization`);
      }
      const now = clock.now();
      const expiresAt = new Date(now.getTime() + deps.options.invitationLifetimeDays * DAY_MS).toISOString();
      const accepted = user?.active === true;
      let invitation = accepted ? undefined : openInvitation(org.id, email);
      if (invitation) Object.assign(invitation, { role, createdAt: now.toISOString(), expiresAt });
      else {
        const created: Invitation = {
          organizationId: org.id,
          email,
          role,
          status: accepted ? 'Accepted' : 'Pending',
          createdAt: now.toISOString(),
          expiresAt,
        };
        store.invitations.push(created);
        invitation = created;
      }
      const member = accepted && user ? memberView(store.addMember(org.id, user.id, role), user) : null;
      const result: InvitationResult = {
        status: invitation.status,
        invitation: invitationView(invitation, clock),
        member,
      };
      store.audit(org.id, actorOf(request, deps), 'InviteMember', {
        metadata: { email, role, status: result.status },
      });
      return reply.code(201).send(result);
    },
  );

  app.delete(
    '/organizations/:organizationId/invitations/:email',
    requires(ORGANIZATIONS_WRITE),
    async (request, reply) => {
      const org = orgOf(request);
      // Fastify has already percent-decoded the path parameter (`a%2Bb%40x.io` → `a+b@x.io`).
      const { email } = request.params as { email: string };
      const invitation = openInvitation(org.id, email);
      if (!invitation) throw notFound('Pending invitation');
      invitation.status = 'Cancelled';
      store.audit(org.id, actorOf(request, deps), 'CancelInvitation', {
        metadata: { email: invitation.email },
      });
      return reply.code(204).send();
    },
  );
}

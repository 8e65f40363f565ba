import { randomUUID } from 'node:crypto';
import type { Clock } from '../domain/clock.js';
import { DocumentMap } from './document-map.js';
import { notFound } from './errors.js';
import type {
  Account,
  AccountTask,
  ActorType,
  AuditEntry,
  Communication,
  Invitation,
  Member,
  Organization,
  Tag,
  User,
} from './model.js';

/** Who ran a command, for the audit journal. */
export interface Actor {
  type: ActorType;
  id: string;
  name: string;
}

export const PREDEFINED_TAGS: readonly Tag[] = [
  {
    id: '0b8a4c1e-5f3a-4d6e-9c2b-1a7f3e5d9c01',
    organizationId: null,
    name: 'VIP',
    kind: 'Predefined',
    color: null,
  },
  {
    id: '0b8a4c1e-5f3a-4d6e-9c2b-1a7f3e5d9c02',
    organizationId: null,
    name: 'Disputed',
    kind: 'Predefined',
    color: null,
  },
];

/**
 * Everything the sandbox knows, in memory. Routes read and write it directly; the journal is
 * appended through `audit()` after each successful command.
 */
export class SandboxStore {
  readonly organizations = new Map<string, Organization>();
  readonly users = new Map<string, User>();
  readonly members: Member[] = [];
  readonly invitations: Invitation[] = [];
  readonly tags = new Map<string, Tag>(PREDEFINED_TAGS.map((t) => [t.id, t]));
  readonly accounts = new Map<string, Account>();
  readonly documents = new DocumentMap();
  readonly auditEntries: AuditEntry[] = [];
  readonly communications = new Map<string, Communication>();
  readonly tasks = new Map<string, AccountTask>();

  constructor(readonly clock: Clock) {}

  newId(): string {
    return randomUUID();
  }

  nowIso(): string {
    return this.clock.now().toISOString();
  }

  userByEmail(email: string): User | undefined {
    const wanted = email.toLowerCase();
    for (const user of this.users.values()) if (user.email.toLowerCase() === wanted) return user;
    return undefined;
  }

  isMember(organizationId: string, userId: string): boolean {
    return this.members.some((m) => m.organizationId === organizationId && m.userId === userId);
  }

  /** The organization, when it exists and the user belongs to it; 404 otherwise (no existence leak). */
  organizationFor(organizationId: string, userId: string): Organization {
    const org = this.organizations.get(organizationId);
    if (!org || !this.isMember(organizationId, userId)) throw notFound('Organization');
    return org;
  }

  /** The account, when its organization is visible to the user; 404 otherwise. */
  accountFor(accountId: string, userId: string): Account {
    const account = this.accounts.get(accountId);
    if (!account || !this.isMember(account.organizationId, userId)) throw notFound('Account');
    return account;
  }

  organizationsOf(userId: string): Organization[] {
    return [...this.organizations.values()].filter((o) => this.isMember(o.id, userId));
  }

  /** Tags an organization can use: its custom tags and the predefined ones. */
  tagsOf(organizationId: string): Tag[] {
    return [...this.tags.values()].filter(
      (t) => t.organizationId === null || t.organizationId === organizationId,
    );
  }

  audit(
    organizationId: string,
    actor: Actor,
    action: string,
    details: { accountIds?: string[]; metadata?: Record<string, unknown> } = {},
  ): AuditEntry {
    const entry: AuditEntry = {
      id: this.newId(),
      organizationId,
      action,
      actor,
      accountIds: details.accountIds ?? [],
      metadata: details.metadata ?? {},
      createdAt: this.nowIso(),
    };
    this.auditEntries.push(entry);
    return entry;
  }

  addOrganization(name: string, emailDomainName: string | null, id = this.newId()): Organization {
    const org: Organization = {
      id,
      name,
      emailDomainName,
      logo: null,
      settings: { letterDetails: null },
      createdAt: this.nowIso(),
    };
    this.organizations.set(id, org);
    return org;
  }

  addUser(email: string, fullName: string, options: { active?: boolean; id?: string } = {}): User {
    const user: User = {
      id: options.id ?? this.newId(),
      email,
      fullName,
      active: options.active ?? true,
      avatar: null,
      notificationPreferences: { digestFrequency: 'Daily', newsletter: true },
    };
    this.users.set(user.id, user);
    return user;
  }

  addMember(organizationId: string, userId: string, role: Member['role'] = 'Member'): Member {
    const member: Member = { organizationId, userId, role, joinedAt: this.nowIso() };
    this.members.push(member);
    return member;
  }
}

/** The world a fresh sandbox starts with: one organization, its admin, and one more active user. */
export interface Seeded {
  organization: Organization;
  user: User;
  otherUser: User;
}

export function seedStore(store: SandboxStore, organizationId?: string): Seeded {
  const organization = store.addOrganization('Sandbox Org', 'sandbox.example', organizationId);
  const user = store.addUser('owner@sandbox.example', 'Sandbox Owner');
  store.addMember(organization.id, user.id, 'Admin');
  const otherUser = store.addUser('colleague@sandbox.example', 'Existing Colleague');
  return { organization, user, otherUser };
}

import type { Clock } from '../../domain/clock.js';
import type { Invitation, Member, Organization, Tag, User } from '../model.js';
import { type ImageView, imageView } from './images.js';
import { type SettingsView, settingsView } from './organizations-settings.js';

/**
 * Response shapes of the organization area. Where the spec says "not shown" the choices are the
 * sandbox's own (listed in docs/sandbox.md).
 */

/**
 * What a client should display as the logo. Derived on every response, never stored: the uploaded
 * logo, else a logo derived from `emailDomainName`, else the name's initials (spec: DELETE logo).
 */
export type DisplayLogo =
  | { source: 'Uploaded' }
  | { source: 'EmailDomain'; emailDomainName: string }
  | { source: 'Initials'; initials: string };

export interface OrganizationView {
  id: string;
  name: string;
  emailDomainName: string | null;
  logo: ImageView | null;
  displayLogo: DisplayLogo;
  settings: SettingsView;
  createdAt: string;
}

/** Up to two initials from the first letters of the name's words ("Sandbox Org" → "SO"). */
export function initialsOf(name: string): string {
  const words = name.split(/\s+/).filter((w) => w.length > 0);
  return words
    .slice(0, 2)
    .map((w) => [...w][0]!.toUpperCase())
    .join('');
}

function displayLogoOf(org: Organization): DisplayLogo {
  if (org.logo) return { source: 'Uploaded' };
  if (org.emailDomainName) return { source: 'EmailDomain', emailDomainName: org.emailDomainName };
  return { source: 'Initials', initials: initialsOf(org.name) };
}

export const organizationView = (org: Organization): OrganizationView => ({
  id: org.id,
  name: org.name,
  emailDomainName: org.emailDomainName,
  logo: imageView(org.logo),
  displayLogo: displayLogoOf(org),
  settings: settingsView(org.settings),
  createdAt: org.createdAt,
});

/** A user as returned by the avatar endpoints ("member" in the spec, without organization fields). */
export interface UserView {
  userId: string;
  email: string;
  fullName: string;
  avatar: ImageView | null;
}

export const userView = (user: User): UserView => ({
  userId: user.id,
  email: user.email,
  fullName: user.fullName,
  avatar: imageView(user.avatar),
});

export interface MemberView extends UserView {
  organizationId: string;
  role: Member['role'];
  joinedAt: string;
}

export const memberView = (member: Member, user: User): MemberView => ({
  ...userView(user),
  organizationId: member.organizationId,
  role: member.role,
  joinedAt: member.joinedAt,
});

/** `Expired` is never stored: a pending invitation past `expiresAt` reads as expired. */
export type InvitationStatus = Invitation['status'] | 'Expired';

export function invitationStatus(invitation: Invitation, clock: Clock): InvitationStatus {
  const expired = clock.now().getTime() >= Date.parse(invitation.expiresAt);
  return invitation.status === 'Pending' && expired ? 'Expired' : invitation.status;
}

export interface InvitationView {
  organizationId: string;
  email: string;
  role: Member['role'];
  status: InvitationStatus;
  createdAt: string;
  expiresAt: string;
}

export const invitationView = (invitation: Invitation, clock: Clock): InvitationView => ({
  organizationId: invitation.organizationId,
  email: invitation.email,
  role: invitation.role,
  status: invitationStatus(invitation, clock),
  createdAt: invitation.createdAt,
  expiresAt: invitation.expiresAt,
});

export interface TagView {
  id: string;
  name: string;
  kind: Tag['kind'];
  color: string | null;
}

export const tagView = (tag: Tag): TagView => ({
  id: tag.id,
  name: tag.name,
  kind: tag.kind,
  color: tag.color,
});

/**
 * The sandbox's records. Field names follow the Public API spec; where the spec says "not shown",
 * the choice made here is listed in docs/sandbox.md.
 */

import type { Address, DateParts } from '../domain/records.js';

export type { Address, DateParts };

export interface StoredFile {
  mimeType: string;
  bytes: Buffer;
  fileName?: string;
}

export interface LetterDetails {
  senderName: string | null;
  senderAddress: string | null;
  signature: string | null;
  footer: string | null;
}

export interface Organization {
  id: string;
  name: string;
  emailDomainName: string | null;
  logo: StoredFile | null;
  settings: { letterDetails: LetterDetails | null; [key: string]: unknown };
  createdAt: string;
}

export interface NotificationPreferences {
  digestFrequency: 'Daily' | 'Weekly' | 'Biweekly' | 'Monthly' | 'Never';
  newsletter: boolean;
}

export interface User {
  id: string;
  email: string;
  fullName: string;
  active: boolean;
  avatar: StoredFile | null;
  /** null = preferences missing (the PATCH answers 404). */
  notificationPreferences: NotificationPreferences | null;
}

export interface Member {
  organizationId: string;
  userId: string;
  role: 'Admin' | 'Member';
  joinedAt: string;
}

export interface Invitation {
  organizationId: string;
  email: string;
  role: Member['role'];
  status: 'Pending' | 'Accepted' | 'Cancelled';
  createdAt: string;
  expiresAt: string;
}

export interface Tag {
  id: string;
  /** null for a predefined tag, shared by every organization. */
  organizationId: string | null;
  name: string;
  kind: 'Custom' | 'Predefined';
  color: string | null;
}

export interface SourceRef {
  connectionId: string;
  sourceId: string;
  connectorType: string;
  lastUpdate: string;
}

export type CollectiveProceeding = 'Yes' | 'No' | 'Unknown';

export interface Account {
  id: string;
  organizationId: string;
  fullName: string;
  currencyCode: string;
  billingAddress: Address;
  source: SourceRef | null;
  lastUnlinkedSource: SourceRef | null;
  readOnlyReason: string | null;
  tagIds: string[];
  dunningPaused: boolean;
  paymentMethod: string | null;
  collectiveProceeding: CollectiveProceeding;
  hasPaymentSchedule: boolean;
  /** Set by the admin seed: the account's collection status becomes `WrittenOff`. */
  writtenOff?: boolean;
  createdAt: string;
  updatedAt: string;
}

export type DocumentKind = 'invoice' | 'creditNote';

export interface DocumentRecord {
  id: string;
  kind: DocumentKind;
  organizationId: string;
  accountId: string;
  number: string;
  issuedDate: DateParts;
  /** null for credit notes. */
  dueDate: DateParts | null;
  totalAmount: string;
  taxAmount: string;
  /** Paid (invoice) or allocated (credit note) amount, a decimal string. */
  paidAmount: string;
  billingAddress: Address;
  file: StoredFile | null;
  sourceId: string | null;
  channel: string;
  connectionId: string | null;
  readOnlyReason: string | null;
  paymentMethod: string | null;
  paymentSchedule: boolean;
  tagIds: string[];
  createdAt: string;
  updatedAt: string;
}

export type ActorType = 'USER' | 'AGENT' | 'SYSTEM' | 'SERVICE_ACCOUNT';

export interface AuditEntry {
  id: string;
  organizationId: string;
  action: string;
  actor: { type: ActorType; id: string; name: string };
  /** Accounts the command touched, kept after an account is deleted. */
  accountIds: string[];
  metadata: Record<string, unknown>;
  createdAt: string;
}

export interface Communication {
  id: string;
  organizationId: string;
  accountId: string;
  accountName: string;
  /** Set when the account was deleted; the communication survives it. */
  accountDeletedAt: string | null;
  contactId: string | null;
  contactName: string | null;
  direction: 'Incoming' | 'Outgoing';
  channel: 'Email' | 'Letter' | 'Sms' | 'Call';
  status: string;
  deliveryStatus: string | null;
  subject: string | null;
  communicationAt: string;
}

export interface AccountTask {
  id: string;
  organizationId: string;
  accountId: string;
  title: string;
  status: 'Todo' | 'InProgress' | 'Done';
  type: string;
  tagIds: string[];
  balance: string;
  createdAt: string;
  updatedAt: string;
}

/**
 * Request and response types of the Public API. Fields the spec shows are typed; where it says
 * "not shown", records keep an index signature (`[key: string]: unknown`) so nothing is hidden.
 * Money travels as decimal strings (see src/domain/decimal.ts), dates of documents as parts.
 */

import type { FilePart } from './multipart.js';

export type { Page } from './pagination.js';

export type Uuid = string;
/** An ISO 8601 datetime. */
export type IsoDateTime = string;
/** A decimal amount with a dot, e.g. `"1234.50"`: never a JS number. */
export type DecimalString = string;

/** A calendar date sent as three integers (`issuedDate.year`, `.month`, `.day`); an address. */
import type { Address, DateParts } from '../domain/records.js';

export type { Address, DateParts };

/** Pagination of cursor lists: `first` 1..100, `after` the previous page's endCursor. */
export interface PageParams {
  first?: number | undefined;
  after?: string | undefined;
}

export type SortOrder = 'asc' | 'desc';

/** An image to upload (logo, avatar): PNG, JPEG or WebP, up to 2 MB. */
export type ImageFile = FilePart;

// Organizations

export interface Organization {
  id: Uuid;
  name: string;
  emailDomainName: string | null;
  settings?: OrganizationSettings;
  [key: string]: unknown;
}

export interface OrganizationSettings {
  /** Four fields (names not shown), replaced as a whole: an omitted field is cleared. */
  letterDetails?: Record<string, string | null> | null;
  [key: string]: unknown;
}

export interface UpdateOrganizationInput {
  name?: string;
  emailDomainName?: string;
}

export type ActorType = 'USER' | 'AGENT' | 'SYSTEM' | 'SERVICE_ACCOUNT';

export interface AuditQuery {
  /** Min 1, default 1. */
  page?: number;
  /** 1..100, default 20. */
  limit?: number;
  accountId?: Uuid;
  actorTypes?: readonly ActorType[];
  action?: string;
  search?: string;
}

/** An audit entry (field names not shown). */
export type AuditEntry = Record<string, unknown>;

/**
 * A page of the audit journal, newest first. The spec only says "paginated"; the fields typed here
 * are the sandbox's choice (docs/sandbox.md), hence optional.
 */
export interface AuditPage {
  items?: AuditEntry[];
  page?: number;
  limit?: number;
  total?: number;
  [key: string]: unknown;
}

export interface CreateInvitationInput {
  email: string;
  [key: string]: unknown;
}

export type InvitationResult = Record<string, unknown>;

/** A member (fields not shown; the optional ones are what the sandbox returns). */
export interface Member {
  userId?: Uuid;
  email?: string;
  [key: string]: unknown;
}

export interface Tag {
  id: Uuid;
  name?: string;
  /** `Custom` (owned by the organization) or `Predefined`. */
  kind?: string;
  [key: string]: unknown;
}

export interface CreateTagInput {
  name: string;
  [key: string]: unknown;
}

// User profile

export type DigestFrequency = 'Daily' | 'Weekly' | 'Biweekly' | 'Monthly' | 'Never';

export interface NotificationPreferences {
  digestFrequency: DigestFrequency;
  newsletter: boolean;
}

// Accounts

export interface SourceReference {
  connectionId: string;
  sourceId: string;
  /** `Custom` for API-managed sources. */
  connectorType: string;
  lastUpdate: IsoDateTime;
}

export interface Account {
  id: Uuid;
  organizationId: Uuid;
  fullName: string;
  currencyCode: string;
  billingAddress: Address;
  source: SourceReference | null;
  lastUnlinkedSource: SourceReference | null;
  /** null = writes accepted; otherwise the connector that would overwrite a write. */
  readOnlyReason: string | null;
  [key: string]: unknown;
}

export interface CreateAccountInput {
  organizationId: Uuid;
  fullName: string;
  currencyCode: string;
  billingAddress: Address;
  /** Links the source in the same request. */
  source?: { connectionId: string; sourceId: string };
  [key: string]: unknown;
}

/** Account data to update (the DTO is not shown; the creation fields are the known ones). */
export interface UpdateAccountInput {
  fullName?: string;
  currencyCode?: string;
  billingAddress?: Address;
  [key: string]: unknown;
}

export interface LinkSourceInput {
  connectionId: string;
  sourceId: string;
  /** Default: now (server time). */
  lastUpdate?: IsoDateTime;
}

export type AccountSortBy = 'fullName' | 'overdueInvoiceCount' | 'overdueBalance' | 'remainingBalance';

/** The balance explanation of one account (fields not shown). */
export type FinancialOverview = Record<string, unknown>;

export type CollectionStatus = 'Open' | 'Settled' | 'WrittenOff' | 'NoInvoice';

export interface Dunning {
  collectionStatus?: CollectionStatus;
  [key: string]: unknown;
}

// Invoices and credit notes

interface DocumentBase {
  id: Uuid;
  accountId: Uuid;
  number: string;
  issuedDate?: DateParts | string;
  totalAmount?: DecimalString;
  taxAmount?: DecimalString;
  billingAddress?: Address;
  sourceId?: string | null;
  /** `PublicApi` for documents created through this API. */
  channel?: string;
  connectionId?: string | null;
  readOnlyReason: string | null;
  status?: string;
  [key: string]: unknown;
}

export interface Invoice extends DocumentBase {
  dueDate?: DateParts | string;
  remainingBalance?: DecimalString;
}

export interface CreditNote extends DocumentBase {
  remainingAmount?: DecimalString;
}

/** A PDF document: `contentType` defaults to `application/pdf`. */
export interface DocumentFile {
  bytes: Uint8Array;
  filename: string;
  contentType?: string;
}

export interface CreateCreditNoteInput {
  accountId: Uuid;
  number: string;
  issuedDate: DateParts;
  totalAmount: DecimalString;
  taxAmount: DecimalString;
  /** Parts left out (or null) are not sent: the server then takes the account's. */
  billingAddress?: Partial<Address> | undefined;
  file?: DocumentFile | undefined;
  /** The caller's id of the document, unique per organization, frozen at creation. */
  sourceId?: string | undefined;
  /**
   * Sent only when `api.compat.createPaid` says the server takes it (under `createPaidField`);
   * otherwise the paid amount goes through the document write after the create.
   */
  paidAmount?: DecimalString | undefined;
}

export interface CreateInvoiceInput extends CreateCreditNoteInput {
  dueDate: DateParts;
  /** The PDF of the invoice (required by the API). */
  file: DocumentFile;
}

/** The contract's `PATCH /invoices/{id}` and `/credit-notes/{id}` body. */
export interface PatchDocumentInput {
  paidAmount?: DecimalString;
  dueDate?: DateParts;
}

// Balances, communications, tasks

export type AgingBalance = Record<string, unknown>;
export type AgingBalanceRow = Record<string, unknown>;
export type OutstandingBalance = Record<string, unknown>;

export interface Communication {
  accountId?: Uuid;
  accountName?: string;
  accountDeletedAt?: IsoDateTime | null;
  /** In account- or channel-scoped lists. */
  accountDeleted?: boolean;
  [key: string]: unknown;
}

export type CommunicationSortBy = 'communicationAt' | 'accountFullName' | 'contactFullName' | 'status';

export type AccountTask = Record<string, unknown>;

export interface ServiceStatus {
  [key: string]: unknown;
}

/**
 * Extra query parameters of endpoints whose parameters the spec does not show. Arrays are sent
 * as repeated parameters.
 */
export type ExtraQuery = Record<string, string | number | boolean | readonly string[] | undefined>;

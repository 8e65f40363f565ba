import type { ReceivablesClient } from '../api/client.js';
import { describeDocumentRoute, isUnknownRouteAnswer } from '../api/compat.js';
import { ApiResponseError } from '../api/errors.js';
import { accountFilters } from '../api/filters.js';
import type { Account, CreditNote, DateParts, Invoice } from '../api/types.js';
import { AppError } from '../domain/errors.js';
import type { DocumentKind, PdfFile, RemoteAccount, RemoteDocument, SyncApi, Write } from '../sync/ports.js';

/** Document dates may come back as parts or as `YYYY-MM-DD`; the sync compares parts. */
export function toParts(value: unknown): DateParts | null {
  if (value && typeof value === 'object' && 'year' in value) return value as DateParts;
  const m = typeof value === 'string' ? /^(\d{4})-(\d{2})-(\d{2})/.exec(value) : null;
  return m ? { year: Number(m[1]), month: Number(m[2]), day: Number(m[3]) } : null;
}

/** The account as the sync engine (and the reconciliation) reads it. */
export const toRemoteAccount = (a: Account): RemoteAccount => ({
  id: a.id,
  fullName: a.fullName,
  currencyCode: a.currencyCode,
  billingAddress: a.billingAddress,
  source: a.source
    ? {
        connectionId: a.source.connectionId,
        sourceId: a.source.sourceId,
        connectorType: a.source.connectorType,
      }
    : null,
  readOnlyReason: a.readOnlyReason,
});

const toRemoteDocument = (d: Invoice | CreditNote): RemoteDocument => ({
  id: d.id,
  sourceId: typeof d.sourceId === 'string' ? d.sourceId : null,
  accountId: d.accountId,
  number: d.number,
  paidAmount: typeof d.paidAmount === 'string' ? d.paidAmount : undefined,
  dueDate: toParts(d.dueDate),
  readOnlyReason: d.readOnlyReason,
});

/** The sync engine's port, implemented over the typed Public API client. */
export class ClientSyncApi implements SyncApi {
  constructor(
    private readonly client: ReceivablesClient,
    readonly organizationId: string,
  ) {}

  get createsPaid(): boolean {
    return this.client.compat.createPaid;
  }

  async findAccountsBySourceIds(sourceIds: readonly string[]): Promise<RemoteAccount[]> {
    if (sourceIds.length === 0) return [];
    const filters = accountFilters().where('source', 'isAnyOf', sourceIds);
    return this.#inOrganization(async () => {
      const found: RemoteAccount[] = [];
      for await (const account of this.client.accounts.list({
        organizationId: this.organizationId,
        filters,
        first: 100,
      })) {
        found.push(toRemoteAccount(account));
      }
      return found;
    });
  }

  async listLinkedAccounts(): Promise<RemoteAccount[]> {
    return this.#inOrganization(async () => {
      const found: RemoteAccount[] = [];
      for await (const account of this.client.accounts.list({
        organizationId: this.organizationId,
        filters: accountFilters().where('source', 'isNotEmpty'),
        first: 100,
      })) {
        found.push(toRemoteAccount(account));
      }
      return found;
    });
  }

  async createAccount(body: Parameters<SyncApi['createAccount']>[0], write: Write): Promise<RemoteAccount> {
    return this.#inOrganization(async () => toRemoteAccount(await this.client.accounts.create(body, write)));
  }

  /**
   * A call whose only resource is the organization (an account's creation, the account lists, the
   * tags): a 404 can only mean the token does not see it, which no row can fix: the pass stops on a
   * configuration error instead of failing each row on it (and spending the budget row by row).
   */
  async #inOrganization<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      if (!(error instanceof ApiResponseError) || error.status !== 404) throw error;
      throw new AppError(
        'ORGANIZATION_NOT_VISIBLE',
        `organization ${this.organizationId} is not among those the token sees (${error.method} ${error.path} answered 404): fix the source's organizationId, or use a token of that organization (\`doctor\` lists what the token sees)`,
        { status: 404, cause: error },
      );
    }
  }

  async updateAccount(
    accountId: string,
    body: Parameters<SyncApi['updateAccount']>[1],
    write: Write,
  ): Promise<RemoteAccount> {
    return toRemoteAccount(await this.client.accounts.update(accountId, body, write));
  }

  async touchAccountSource(accountId: string, lastUpdate: string, write: Write): Promise<RemoteAccount> {
    return toRemoteAccount(await this.client.accounts.touchSource(accountId, { lastUpdate }, write));
  }

  async linkAccountSource(
    accountId: string,
    link: { connectionId: string; sourceId: string; lastUpdate: string },
    write: Write,
  ): Promise<RemoteAccount> {
    return toRemoteAccount(await this.client.accounts.linkSource(accountId, link, write));
  }

  async unlinkAccountSource(accountId: string): Promise<void> {
    await this.client.accounts.unlinkSource(accountId);
  }

  async listTags() {
    const tags = await this.#inOrganization(() => this.client.organizations.tags(this.organizationId));
    return tags.map((t) => ({ id: t.id, name: String(t.name) }));
  }

  async createTag(name: string, write: Write) {
    const tag = await this.#inOrganization(() =>
      this.client.organizations.createTag(this.organizationId, { name }, write),
    );
    return { id: tag.id, name: String(tag.name) };
  }

  async attachTags(accountId: string, tagIds: readonly string[], write: Write): Promise<void> {
    await this.client.accounts.attachTags(accountId, tagIds, write);
  }

  async detachTag(accountId: string, tagId: string): Promise<void> {
    await this.client.accounts.detachTag(accountId, tagId);
  }

  async findDocumentsBySourceIds(
    kind: DocumentKind,
    sourceIds: readonly string[],
  ): Promise<RemoteDocument[]> {
    if (sourceIds.length === 0) return [];
    const endpoint = kind === 'invoice' ? this.client.invoices : this.client.creditNotes;
    return [...(await endpoint.findBySourceIds(this.organizationId, sourceIds)).values()].map(
      toRemoteDocument,
    );
  }

  async createDocument(
    kind: DocumentKind,
    input: Parameters<SyncApi['createDocument']>[1],
    file: PdfFile,
    write: Write,
  ): Promise<RemoteDocument> {
    const withFile = {
      ...input,
      file: { bytes: file.bytes, filename: file.fileName, contentType: 'application/pdf' },
    };
    if (kind === 'invoice') {
      if (!input.dueDate) throw new TypeError('an invoice needs a due date');
      return toRemoteDocument(
        await this.client.invoices.create({ ...withFile, dueDate: input.dueDate }, write),
      );
    }
    return toRemoteDocument(await this.client.creditNotes.create(withFile, write));
  }

  async patchDocument(
    kind: DocumentKind,
    documentId: string,
    body: { paidAmount?: string; dueDate?: DateParts },
    write: Write,
  ): Promise<RemoteDocument> {
    const endpoint = kind === 'invoice' ? this.client.invoices : this.client.creditNotes;
    try {
      return toRemoteDocument(await endpoint.patch(documentId, body, write));
    } catch (error) {
      // No such route is the configuration's fault, not the row's: the pass stops and says so, and
      // the document write is sent again once api.compat names the service's route.
      if (error instanceof ApiResponseError && isUnknownRouteAnswer(error.status, error.message)) {
        throw new AppError(
          'DOCUMENT_WRITE_ROUTE',
          `the service has no document write ${describeDocumentRoute(this.client.compat.documentPatch)} (${error.message}): set api.compat.documentPatch to its route (docs/compatibility.md; \`doctor\` checks it)`,
          { cause: error, status: error.status },
        );
      }
      throw error;
    }
  }
}

import {
  type ApiCompat,
  DEFAULT_API_COMPAT,
  type DocumentPathKind,
  documentPatchBody,
  documentPatchPath,
} from '../compat.js';
import { anyOfBatches, FilterBuilder } from '../filters.js';
import type { MultipartField } from '../multipart.js';
import type { Page } from '../pagination.js';
import { documentShape, pageOf } from '../response-shapes.js';
import type {
  CreateCreditNoteInput,
  CreateInvoiceInput,
  CreditNote,
  DateParts,
  Invoice,
  PatchDocumentInput,
} from '../types.js';
import {
  type EndpointContext,
  get,
  iterate,
  type ListParams,
  listQuery,
  type ReadOptions,
  segment,
  type WriteOptions,
  write,
} from './shared.js';

export interface DocumentListParams<R extends 'invoices' | 'creditNotes'> extends ListParams<R> {
  organizationId: string;
}

/**
 * The multipart form of a document creation, in a fixed order: `accountId`, `number`, dates as
 * `<name>.year/.month/.day`, amounts, the address parts that are set, `sourceId`, then the PDF.
 * A `paidAmount` is sent only under `createPaidField` (a server that takes it, `api.compat.createPaid`).
 */
export function documentFormFields(
  input: CreateCreditNoteInput & { dueDate?: DateParts },
  createPaidField?: string,
): MultipartField[] {
  const fields: MultipartField[] = [
    { name: 'accountId', value: input.accountId },
    { name: 'number', value: input.number },
    ...dateFields('issuedDate', input.issuedDate),
    ...(input.dueDate ? dateFields('dueDate', input.dueDate) : []),
    { name: 'totalAmount', value: input.totalAmount },
    { name: 'taxAmount', value: input.taxAmount },
  ];
  for (const part of ['street', 'city', 'postalCode', 'country'] as const) {
    const value = input.billingAddress?.[part];
    if (value !== undefined && value !== null) fields.push({ name: `billingAddress.${part}`, value });
  }
  if (input.sourceId !== undefined) fields.push({ name: 'sourceId', value: input.sourceId });
  if (createPaidField && input.paidAmount !== undefined) {
    fields.push({ name: createPaidField, value: input.paidAmount });
  }
  if (input.file) {
    fields.push({
      name: 'file',
      file: {
        bytes: input.file.bytes,
        filename: input.file.filename,
        contentType: input.file.contentType ?? 'application/pdf',
      },
    });
  }
  return fields;
}

function dateFields(name: string, date: DateParts): MultipartField[] {
  for (const [part, value] of Object.entries(date)) {
    if (!Number.isInteger(value))
      throw new TypeError(`${name}.${part} must be an integer, got ${String(value)}`);
  }
  return [
    { name: `${name}.year`, value: String(date.year) },
    { name: `${name}.month`, value: String(date.month) },
    { name: `${name}.day`, value: String(date.day) },
  ];
}

/**
 * `/invoices` or `/credit-notes`: list (filterable), multipart create, the write of the paid amount /
 * due date (route and field names from `api.compat.documentPatch`, the contract's PATCH by
 * default), and lookups by the caller's `sourceId`.
 */
export class DocumentsEndpoint<
  R extends 'invoices' | 'creditNotes',
  D extends { sourceId?: string | null },
  C extends CreateCreditNoteInput,
> {
  readonly #ctx: EndpointContext;
  readonly #path: '/invoices' | '/credit-notes';
  readonly #kind: DocumentPathKind;
  readonly #resource: R;
  readonly #compat: ApiCompat;

  constructor(ctx: EndpointContext, resource: R, compat: ApiCompat = DEFAULT_API_COMPAT) {
    this.#ctx = ctx;
    this.#resource = resource;
    this.#kind = resource === 'invoices' ? 'invoices' : 'credit-notes';
    this.#path = `/${this.#kind}`;
    this.#compat = compat;
  }

  listPage(params: DocumentListParams<R>, options?: ReadOptions): Promise<Page<D>> {
    const query = listQuery(params, { organizationId: params.organizationId });
    return get(this.#ctx, { path: this.#path, query, expect: pageOf(documentShape) }, options);
  }

  list(params: DocumentListParams<R>): AsyncGenerator<D, void, undefined> {
    return iterate(this.#ctx, params, (p) => this.listPage(p));
  }

  /**
   * Creates the document (multipart, serialised once: every retry sends the same bytes with the
   * same Idempotency-Key). A `sourceId` already used answers 400 `...duplicate-source-id`: look the
   * document up with `findBySourceIds` rather than creating a second one.
   */
  create(input: C, options?: WriteOptions): Promise<D> {
    const paidField = this.#compat.createPaid ? this.#compat.createPaidField : undefined;
    return write(
      this.#ctx,
      {
        method: 'POST',
        path: this.#path,
        body: { multipart: documentFormFields(input, paidField) },
        expect: documentShape,
      },
      options,
    );
  }

  /** `GET /{kind}/{id}` (path not shown by the spec; the sandbox's choice). */
  get(documentId: string, options?: ReadOptions): Promise<D> {
    return get(this.#ctx, { path: `${this.#path}/${segment(documentId)}`, expect: documentShape }, options);
  }

  /**
   * Sets the paid (allocated) amount and/or, on invoices, the due date, through the server's route
   * (`api.compat.documentPatch`; default `PATCH /{kind}/{id}`). Value-setting: safe to repeat.
   */
  patch(documentId: string, input: PatchDocumentInput, options?: WriteOptions): Promise<D> {
    const route = this.#compat.documentPatch;
    return write(
      this.#ctx,
      {
        method: route.method,
        path: documentPatchPath(route, this.#kind, documentId),
        body: { json: documentPatchBody(route, input) },
        expect: documentShape,
      },
      options,
    );
  }

  /**
   * Upsert keyed by `sourceId` (the spec says it exists without its path; the sandbox serves
   * `PUT /{kind}/by-source-id/{sourceId}` with the creation form). 201 created, 200 updated.
   */
  upsertBySourceId(sourceId: string, input: C, options?: WriteOptions): Promise<D> {
    return write(
      this.#ctx,
      {
        method: 'PUT',
        path: `${this.#path}/by-source-id/${segment(sourceId)}`,
        body: { multipart: documentFormFields({ ...input, sourceId }) },
        expect: documentShape,
      },
      options,
    );
  }

  /**
   * The documents carrying these `sourceId`s, found with `sourceId:isAnyOf` conditions batched
   * within the filter limits (50 values, 8000 characters). Ids without a document are absent.
   */
  async findBySourceIds(
    organizationId: string,
    sourceIds: readonly string[],
    options?: ReadOptions,
  ): Promise<Map<string, D>> {
    const found = new Map<string, D>();
    for (const batch of anyOfBatches(sourceIds, { field: 'sourceId' })) {
      const filters = sourceIdFilter(this.#resource, batch);
      for await (const doc of iterate(this.#ctx, { organizationId, filters, first: 100 }, (p) =>
        this.listPage(p, options),
      )) {
        if (typeof doc.sourceId === 'string') found.set(doc.sourceId, doc);
      }
    }
    return found;
  }
}

/** `sourceId:isAnyOf:...` on either document list (the field has the same operators on both). */
function sourceIdFilter<R extends 'invoices' | 'creditNotes'>(
  resource: R,
  ids: readonly string[],
): FilterBuilder<R> {
  const builder = new FilterBuilder<'invoices' | 'creditNotes'>(resource).where('sourceId', 'isAnyOf', ids);
  return builder as FilterBuilder<R>;
}

export type InvoicesEndpoint = DocumentsEndpoint<'invoices', Invoice, CreateInvoiceInput>;
export type CreditNotesEndpoint = DocumentsEndpoint<'creditNotes', CreditNote, CreateCreditNoteInput>;

export const invoicesEndpoint = (ctx: EndpointContext, compat?: ApiCompat): InvoicesEndpoint =>
  new DocumentsEndpoint(ctx, 'invoices', compat);
export const creditNotesEndpoint = (ctx: EndpointContext, compat?: ApiCompat): CreditNotesEndpoint =>
  new DocumentsEndpoint(ctx, 'creditNotes', compat);

/**
 * The write that sets a document's paid amount / due date. The spec says it exists and shows
 * neither its path nor its body; the client follows `api.compat.documentPatch`, the sandbox
 * serves `compat.documentPatch`, both defaulting to the contract's choice below.
 */
export interface DocumentRoute {
  method: 'PATCH' | 'PUT' | 'POST';
  /** Under `/api/public/v1`: `{kind}` is `invoices` or `credit-notes`, `{id}` the document id. */
  path: string;
  /** JSON field names of the body: the paid amount (a decimal string) and the due date (`{year, month, day}`). */
  paidAmountField: string;
  dueDateField: string;
}

/** The contract's choice: `PATCH /invoices/{id}` / `PATCH /credit-notes/{id}` with `{paidAmount, dueDate}`. */
export const CONTRACT_DOCUMENT_ROUTE: DocumentRoute = {
  method: 'PATCH',
  path: '/{kind}/{id}',
  paidAmountField: 'paidAmount',
  dueDateField: 'dueDate',
};

/** The form field of a paid amount at creation, where a server takes one. */
export const CONTRACT_CREATE_PAID_FIELD = 'paidAmount';

/** Helpers shared by the account and document conformance tests. */

import { PDF_BYTES, seedConnectorAccount, type TestSandbox } from '../../support/sandbox.js';

export const ADDRESS = { street: '1 rue de la Paix', city: 'Paris', postalCode: '75002', country: 'FR' };

/** A valid `POST /accounts` body. */
export const accountBody = (sandbox: TestSandbox, fullName: string, extra: Record<string, unknown> = {}) => ({
  organizationId: sandbox.organizationId,
  fullName,
  currencyCode: 'EUR',
  billingAddress: ADDRESS,
  ...extra,
});

/** Creates an account through the API and returns its JSON. */
export async function createAccount(
  sandbox: TestSandbox,
  fullName: string,
  extra: Record<string, unknown> = {},
): Promise<any> {
  const created = await sandbox.call('POST', '/accounts', { body: accountBody(sandbox, fullName, extra) });
  if (created.status !== 201)
    throw new Error(`account creation: ${created.status} ${JSON.stringify(created.body)}`);
  return created.body;
}

/** A connector-managed account, as a connector would have imported it (admin seed). */
export const seedManagedAccount = (
  sandbox: TestSandbox,
  sourceId = 'PL-1',
  organizationId = sandbox.organizationId,
) => seedConnectorAccount(sandbox, { sourceId, organizationId });

/** The multipart form of a document: every field valid unless overridden; `undefined` drops a field. */
export function documentForm(
  accountId: string,
  fields: Record<string, string | undefined> = {},
  file: Buffer | null = PDF_BYTES,
): FormData {
  const all: Record<string, string | undefined> = {
    accountId,
    number: `N-${Math.random().toString(36).slice(2, 10)}`,
    'issuedDate.year': '2026',
    'issuedDate.month': '1',
    'issuedDate.day': '15',
    'dueDate.year': '2026',
    'dueDate.month': '2',
    'dueDate.day': '14',
    totalAmount: '120.00',
    taxAmount: '20.00',
    ...fields,
  };
  const form = new FormData();
  for (const [name, value] of Object.entries(all)) if (value !== undefined) form.append(name, value);
  if (file) form.append('file', new Blob([file], { type: 'application/pdf' }), 'document.pdf');
  return form;
}

/** The credit-note form: the invoice form without `dueDate`. */
export const creditNoteForm = (
  accountId: string,
  fields: Record<string, string | undefined> = {},
  file?: Buffer | null,
) =>
  documentForm(
    accountId,
    { 'dueDate.year': undefined, 'dueDate.month': undefined, 'dueDate.day': undefined, ...fields },
    file === undefined ? PDF_BYTES : file,
  );

/** Creates a document through the API and returns its JSON. */
export async function createDocument(
  sandbox: TestSandbox,
  path: '/invoices' | '/credit-notes',
  form: FormData,
): Promise<any> {
  const created = await sandbox.call('POST', path, { body: form });
  if (created.status !== 201) throw new Error(`${path}: ${created.status} ${JSON.stringify(created.body)}`);
  return created.body;
}

/** The audit entries of one action, newest last (read from the in-process store). */
export const auditOf = (sandbox: TestSandbox, action: string) =>
  sandbox.deps.store.auditEntries.filter((entry) => entry.action === action);

/** A list call of the seeded organization. */
export const listOf = (
  sandbox: TestSandbox,
  path: string,
  query: Record<string, string | number | undefined> = {},
) => sandbox.call('GET', path, { query: { organizationId: sandbox.organizationId, ...query } });

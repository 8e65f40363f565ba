import { describe, expect, it } from 'vitest';
import type { AccountRecord, InvoiceRecord } from '../../../src/domain/records.js';
import { accountCreateBody, accountHash, accountMatches } from '../../../src/mapping/account-payload.js';
import { canonicalJson } from '../../../src/mapping/content-hash.js';
import {
  documentCreateInput,
  documentHash,
  documentPatch,
  immutableHash,
  mutableState,
} from '../../../src/mapping/document-payload.js';
import { renderDocumentPdf } from '../../../src/mapping/render-pdf.js';

const account: AccountRecord = {
  kind: 'account',
  sourceId: 'C-1',
  fullName: 'Acme SARL',
  currencyCode: 'EUR',
  billingAddress: { street: '1 rue X', city: 'Paris', postalCode: '75001', country: 'FR' },
  tags: ['VIP', 'north'],
  updatedAt: '2026-01-01T00:00:00Z',
};

const invoice: InvoiceRecord = {
  kind: 'invoice',
  sourceId: 'INV-1',
  accountSourceId: 'C-1',
  number: 'F-2026-001',
  issuedDate: { year: 2026, month: 1, day: 15 },
  dueDate: { year: 2026, month: 2, day: 14 },
  totalAmount: '120.5',
  taxAmount: '20.08',
  billingAddress: null,
  file: null,
  paidAmount: null,
  updatedAt: null,
};

describe('account payloads', () => {
  it('when an account is created, then its source is linked in the same body with the connection id', () => {
    expect(accountCreateBody(account, 'org-1', 'erp-csv')).toEqual({
      organizationId: 'org-1',
      fullName: 'Acme SARL',
      currencyCode: 'EUR',
      billingAddress: account.billingAddress,
      source: { connectionId: 'erp-csv', sourceId: 'C-1' },
    });
  });

  it('when only updatedAt or the tag order changes, then the hash is the same (no API call)', () => {
    expect(accountHash({ ...account, updatedAt: '2027-01-01T00:00:00Z', tags: ['north', 'VIP'] })).toBe(
      accountHash(account),
    );
  });

  it('when a synced field or a tag changes, then the hash changes', () => {
    expect(accountHash({ ...account, fullName: 'Acme SAS' })).not.toBe(accountHash(account));
    expect(accountHash({ ...account, tags: ['VIP'] })).not.toBe(accountHash(account));
    expect(accountHash({ ...account, billingAddress: { ...account.billingAddress, city: 'Lyon' } })).not.toBe(
      accountHash(account),
    );
  });

  it('when the remote account holds the same values, then it matches (adopted without update)', () => {
    expect(
      accountMatches(account, {
        fullName: 'Acme SARL',
        currencyCode: 'EUR',
        billingAddress: account.billingAddress,
      }),
    ).toBe(true);
    expect(
      accountMatches(account, {
        fullName: 'Acme SARL',
        currencyCode: 'USD',
        billingAddress: account.billingAddress,
      }),
    ).toBe(false);
  });
});

describe('document payloads', () => {
  it('when an invoice is mapped, then dates stay parts and amounts become normalised decimal strings', () => {
    expect(documentCreateInput(invoice, 'acc-1')).toEqual({
      accountId: 'acc-1',
      number: 'F-2026-001',
      issuedDate: { year: 2026, month: 1, day: 15 },
      dueDate: { year: 2026, month: 2, day: 14 },
      totalAmount: '120.50',
      taxAmount: '20.08',
      sourceId: 'INV-1',
    });
  });

  it('when the row has no paid amount, then the wanted paid amount is 0.00 and no PATCH is needed after creation', () => {
    expect(mutableState(invoice)).toEqual({ paidAmount: '0.00', dueDate: invoice.dueDate });
    expect(documentPatch({ paidAmount: '0.00', dueDate: invoice.dueDate }, mutableState(invoice))).toBeNull();
  });

  it('when the paid amount or the due date differs, then the PATCH carries exactly those fields', () => {
    const wanted = mutableState({ ...invoice, paidAmount: '50', dueDate: { year: 2026, month: 3, day: 1 } });
    expect(documentPatch({ paidAmount: '0.00', dueDate: invoice.dueDate }, wanted)).toEqual({
      paidAmount: '50.00',
      dueDate: { year: 2026, month: 3, day: 1 },
    });
    expect(documentPatch({ paidAmount: '50', dueDate: { year: 2026, month: 3, day: 1 } }, wanted)).toBeNull();
  });

  it('when a frozen field changes, then the frozen hash changes but a paid amount change does not touch it', () => {
    expect(immutableHash({ ...invoice, totalAmount: '121' })).not.toBe(immutableHash(invoice));
    expect(immutableHash({ ...invoice, paidAmount: '10' })).toBe(immutableHash(invoice));
    expect(documentHash({ ...invoice, paidAmount: '10' })).not.toBe(documentHash(invoice));
    expect(documentHash({ ...invoice, totalAmount: '120.50' })).toBe(documentHash(invoice));
  });

  it('when two records differ only by their key or kind, then their fingerprints differ (a fingerprint names one record)', () => {
    expect(documentHash({ ...invoice, sourceId: 'OTHER' })).not.toBe(documentHash(invoice));
    const { dueDate: _, paidAmount: __, updatedAt: ___, billingAddress: ____, ...common } = invoice;
    const creditNote = { ...common, kind: 'creditNote' as const, updatedAt: null };
    expect(documentHash(creditNote)).not.toBe(documentHash({ ...invoice, paidAmount: null }));
  });

  it('when a record is read back from the state DB as JSON, then its fingerprint is the same', () => {
    const stored = JSON.parse(
      JSON.stringify({
        ...invoice,
        billingAddress: { street: 'x', city: 'y', postalCode: null, country: 'FR' },
      }),
    );
    expect(documentHash(stored)).toBe(
      documentHash({
        ...invoice,
        billingAddress: { country: 'FR', city: 'y', street: 'x', postalCode: null },
      }),
    );
  });

  it('when canonical JSON is built, then key order does not matter and undefined keys are left out', () => {
    expect(canonicalJson({ b: 1, a: [2, { d: undefined, c: 3 }] })).toBe(
      canonicalJson({ a: [2, { c: 3 }], b: 1 }),
    );
  });
});

describe('PDF rendered from a row', () => {
  it('when the same row is rendered twice, then the bytes are identical and form a PDF', async () => {
    const a = await renderDocumentPdf(invoice, 'Acme SARL');
    const b = await renderDocumentPdf(invoice, 'Acme SARL');
    expect(a.subarray(0, 5).toString()).toBe('%PDF-');
    expect(a.equals(b)).toBe(true);
    expect((await renderDocumentPdf({ ...invoice, number: 'F-2' }, 'Acme SARL')).equals(a)).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import {
  DEFAULT_API_COMPAT,
  documentPatchBody,
  documentPatchPath,
  isUnknownRouteAnswer,
} from '../../../src/api/compat.js';
import { documentFormFields } from '../../../src/api/endpoints/documents.js';

const ROUTE = {
  method: 'PUT',
  path: '/{kind}/{id}/payment',
  paidAmountField: 'amountPaid',
  dueDateField: 'dueOn',
} as const;

describe('api.compat: the document write and paid creations', () => {
  it("when the route is the contract's, then the path is /{kind}/{id} with the id encoded", () => {
    expect(documentPatchPath(DEFAULT_API_COMPAT.documentPatch, 'credit-notes', 'a/b c')).toBe(
      '/credit-notes/a%2Fb%20c',
    );
    expect(documentPatchPath(ROUTE, 'invoices', 'x1')).toBe('/invoices/x1/payment');
  });

  it('when the server names the fields otherwise, then the body uses its names and leaves out what is not sent', () => {
    expect(
      documentPatchBody(ROUTE, { paidAmount: '10.00', dueDate: { year: 2027, month: 1, day: 2 } }),
    ).toEqual({
      amountPaid: '10.00',
      dueOn: { year: 2027, month: 1, day: 2 },
    });
    expect(documentPatchBody(ROUTE, { paidAmount: '0.00' })).toEqual({ amountPaid: '0.00' });
  });

  it('when a create carries a paid amount, then the form sends it only under the field of a server that takes it', () => {
    const input = {
      accountId: 'acc',
      number: 'F-1',
      issuedDate: { year: 2026, month: 1, day: 10 },
      totalAmount: '120.00',
      taxAmount: '20.00',
      paidAmount: '40.00',
    };
    expect(documentFormFields(input).map((f) => f.name)).not.toContain('paidAmount');
    const taken = documentFormFields(input, 'amountPaid');
    expect(taken.find((f) => f.name === 'amountPaid')).toEqual({ name: 'amountPaid', value: '40.00' });
  });

  it.each([
    [405, 'Method Not Allowed', true],
    [404, 'Route PATCH:/api/public/v1/invoices/1 not found', true],
    [404, 'Cannot PATCH /api/public/v1/invoices/1', true],
    [404, 'Invoice not found', false],
    [404, undefined, false],
    [400, 'Route is fine, the body is not', false],
  ])('when the answer is %i "%s", then an unknown route: %s', (status, message, unknown) => {
    expect(isUnknownRouteAnswer(status, message)).toBe(unknown);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiResponseError } from '../../../src/api/errors.js';
import { errorKindOf } from '../../../src/domain/errors.js';
import type { SandboxCompat } from '../../../src/sandbox/options.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';
import { address, clientFor, invoiceInput } from './client-support.js';

/**
 * The status of a duplicate (a document `sourceId` already used, an account source already
 * linked) is the spec's 400 for the first, not shown for the second; a server may answer 409 or
 * 422. Under each, over HTTP against the sandbox switched to it: the answer is the record's
 * problem (`data`: the engine looks the record up and adopts it), sent once, never retried.
 */
describe.each<SandboxCompat['duplicateSourceStatus']>([400, 409, 422])(
  'a server that answers a duplicate with status %i',
  (status) => {
    let sandbox: TestSandbox;
    let harness: ReturnType<typeof clientFor>;
    let accountId: string;
    beforeAll(async () => {
      sandbox = await startTestSandbox({ compat: { duplicateSourceStatus: status } });
      harness = clientFor(sandbox);
      const account = await harness.client.accounts.create({
        organizationId: sandbox.organizationId,
        fullName: 'Alpha',
        currencyCode: 'EUR',
        billingAddress: address,
        source: { connectionId: 'erp-csv', sourceId: 'C-1' },
      });
      accountId = account.id;
      await harness.client.invoices.create(invoiceInput(accountId, 1, 'INV-1'));
    });
    afterAll(() => sandbox.close());

    it('when an account is created with a source already linked, then the refusal is data, sent once', async () => {
      const before = harness.sent.length;
      const error = await harness.client.accounts
        .create({
          organizationId: sandbox.organizationId,
          fullName: 'Alpha again',
          currencyCode: 'EUR',
          billingAddress: address,
          source: { connectionId: 'erp-csv', sourceId: 'C-1' },
        })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiResponseError);
      expect(error).toMatchObject({ status, retryable: false });
      expect((error as ApiResponseError).apiCode).toMatch(/(duplicate-source|source-already-linked)$/);
      expect(errorKindOf(error)).toBe('data');
      expect(harness.sent.length - before).toBe(1);
    });

    it('when an invoice is created with a sourceId already used, then the refusal is data, sent once', async () => {
      const before = harness.sent.length;
      const error = await harness.client.invoices
        .create(invoiceInput(accountId, 2, 'INV-1'))
        .catch((e: unknown) => e);
      expect(error).toMatchObject({
        status,
        apiCode: 'app-invoicing.invoice.duplicate-source-id',
        retryable: false,
      });
      expect(errorKindOf(error)).toBe('data');
      expect(harness.sent.length - before).toBe(1);
    });
  },
);

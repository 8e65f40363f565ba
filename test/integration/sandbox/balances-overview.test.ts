import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestSandbox } from '../../support/sandbox.js';
import {
  isoDaysAgo,
  newOrganization,
  seedAccount,
  seedCreditNote,
  seedInvoice,
  startClockedSandbox,
  tokenWith,
} from './balances-support.js';

const UNKNOWN = '00000000-0000-4000-8000-000000000000';

describe('GET /accounts/{accountId}/financial-overview and /dunning', () => {
  let sandbox: TestSandbox;
  let org: string;
  beforeAll(async () => {
    ({ sandbox } = await startClockedSandbox());
    org = await newOrganization(sandbox, 'Overview Org');
  });
  afterAll(() => sandbox.close());

  const dunning = (accountId: string, token?: string) =>
    sandbox.call('GET', `/accounts/${accountId}/dunning`, { token });

  describe('financial overview', () => {
    let account: string;
    beforeAll(async () => {
      account = await seedAccount(sandbox, org, 'Overview Co');
      await seedInvoice(sandbox, account, '100.00', 40, { number: 'INV-OLD', paidAmount: '100.00' });
      await seedInvoice(sandbox, account, '80.00', 12, { number: 'INV-LATE', paidAmount: '30.00' });
      await seedInvoice(sandbox, account, '60.00', 0, { number: 'INV-TODAY' });
      await seedInvoice(sandbox, account, '200.00', -20, { number: 'INV-NEXT' });
      await seedCreditNote(sandbox, account, '25.00', '5.00');
    });

    it('when read, then every invoice installment is listed by due date, past ones and future ones', async () => {
      const r = await sandbox.call('GET', `/accounts/${account}/financial-overview`);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ accountId: account, accountName: 'Overview Co', currencyCode: 'EUR' });
      const rows = r.body.installments.map((i: any) => [
        i.number,
        i.dueDate,
        i.past,
        i.status,
        i.remainingBalance,
      ]);
      expect(rows).toEqual([
        ['INV-OLD', isoDaysAgo(40), true, 'Paid', '0.00'],
        ['INV-LATE', isoDaysAgo(12), true, 'Overdue', '50.00'],
        ['INV-TODAY', isoDaysAgo(0), false, 'Issued', '60.00'],
        ['INV-NEXT', isoDaysAgo(-20), false, 'Issued', '200.00'],
      ]);
      expect(r.body.installments[1]).toMatchObject({ amount: '80.00', paidAmount: '30.00', daysOverdue: 12 });
    });

    it('when read, then the totals explain the balance, credit notes included', async () => {
      const r = await sandbox.call('GET', `/accounts/${account}/financial-overview`);
      expect(r.body.totals).toEqual({
        invoicedAmount: '440.00',
        paidAmount: '130.00',
        openInvoiceAmount: '310.00',
        overdueBalance: '50.00',
        notDueAmount: '260.00',
        unallocatedCredit: '20.00',
        remainingBalance: '290.00',
      });
      expect(r.body.creditNotes).toEqual([
        expect.objectContaining({ amount: '25.00', allocatedAmount: '5.00', remainingAmount: '20.00' }),
      ]);
    });

    it('when the account is unknown, then 404; when the token lacks an accounts scope, then 403', async () => {
      expect((await sandbox.call('GET', `/accounts/${UNKNOWN}/financial-overview`)).status).toBe(404);
      const token = await tokenWith(sandbox, ['dunning:manage']);
      const denied = await sandbox.call('GET', `/accounts/${account}/financial-overview`, { token });
      expect(denied.status).toBe(403);
    });
  });

  describe('dunning', () => {
    it('when the account has no invoice (a credit note only), then collectionStatus is NoInvoice', async () => {
      const account = await seedAccount(sandbox, org, 'No invoice');
      await seedCreditNote(sandbox, account, '10.00');
      const r = await dunning(account);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({
        accountId: account,
        collectionStatus: 'NoInvoice',
        dunningPaused: false,
      });
    });

    it('when every invoice is paid, then collectionStatus is Settled', async () => {
      const account = await seedAccount(sandbox, org, 'Settled');
      await seedInvoice(sandbox, account, '10.00', 40, { paidAmount: '10.00' });
      await seedInvoice(sandbox, account, '5.00', -2, { paidAmount: '5.00' });
      expect((await dunning(account)).body.collectionStatus).toBe('Settled');
    });

    it('when an invoice still has a remaining balance, then collectionStatus is Open with the overdue figures', async () => {
      const account = await seedAccount(sandbox, org, 'Open', { dunningPaused: true });
      await seedInvoice(sandbox, account, '10.00', 40, { paidAmount: '10.00' });
      await seedInvoice(sandbox, account, '30.00', 15);
      await seedInvoice(sandbox, account, '12.50', -5);
      const r = await dunning(account);
      expect(r.body).toMatchObject({
        collectionStatus: 'Open',
        dunningPaused: true,
        overdueInvoiceCount: 1,
        overdueBalance: '30.00',
        remainingBalance: '42.50',
        daysOverdue: 15,
      });
    });

    it('when the account was seeded as written off, then collectionStatus is WrittenOff', async () => {
      const account = await seedAccount(sandbox, org, 'Written off', { writtenOff: true });
      await seedInvoice(sandbox, account, '99.00', 200);
      expect((await dunning(account)).body.collectionStatus).toBe('WrittenOff');
    });

    it('when the token has dunning:manage or accounts:read, then 200; with communications:read only, then 403', async () => {
      const account = await seedAccount(sandbox, org, 'Scopes');
      for (const scope of ['dunning:manage', 'accounts:read', 'accounts:all']) {
        expect((await dunning(account, await tokenWith(sandbox, [scope]))).status).toBe(200);
      }
      expect((await dunning(account, await tokenWith(sandbox, ['communications:read']))).status).toBe(403);
    });

    it('when the account is unknown or in another organization, then 404', async () => {
      expect((await dunning(UNKNOWN)).status).toBe(404);
      const foreignOrg = await sandbox.admin('POST', '/organizations', {
        name: 'Foreign',
        memberUserIds: [],
      });
      const foreign = await seedAccount(sandbox, foreignOrg.id, 'Foreign account');
      expect((await dunning(foreign)).status).toBe(404);
    });
  });
});

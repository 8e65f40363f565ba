import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ManualClock } from '../../../src/domain/clock.js';
import type { TestSandbox } from '../../support/sandbox.js';
import {
  NOW,
  newOrganization,
  seedAccount,
  seedCreditNote,
  seedInvoice,
  startClockedSandbox,
  tokenWith,
} from './balances-support.js';

const ZERO = { notDue: '0.00', days1To30: '0.00', days31To60: '0.00', days61To90: '0.00', over90: '0.00' };

describe('GET /aging-balance', () => {
  let sandbox: TestSandbox;
  let clock: ManualClock;
  beforeAll(async () => {
    ({ sandbox, clock } = await startClockedSandbox());
  });
  afterAll(() => sandbox.close());

  const aging = (organizationId: string, token?: string) =>
    sandbox.call('GET', '/aging-balance', { query: { organizationId }, token });
  const euro = (body: any) => body.currencies.find((c: any) => c.currencyCode === 'EUR');

  it('when invoices are 0, 1, 30, 31, 60, 61, 90 and 91 days past due, then each lands in its bucket by days past the due date', async () => {
    const org = await newOrganization(sandbox);
    const account = await seedAccount(sandbox, org, 'Aging Co');
    const amounts: [number, string][] = [
      [-10, '1.00'],
      [0, '2.00'],
      [1, '10.00'],
      [30, '20.00'],
      [31, '100.00'],
      [60, '200.00'],
      [61, '1000.00'],
      [90, '2000.00'],
      [91, '10000.00'],
    ];
    for (const [days, amount] of amounts) await seedInvoice(sandbox, account, amount, days);
    const r = await aging(org);
    expect(r.status).toBe(200);
    expect(r.body.organizationId).toBe(org);
    expect(euro(r.body)).toEqual({
      currencyCode: 'EUR',
      buckets: {
        notDue: '3.00',
        days1To30: '30.00',
        days31To60: '300.00',
        days61To90: '3000.00',
        over90: '10000.00',
      },
      unallocatedCredit: '0.00',
      total: '13333.00',
    });
  });

  it('when an invoice is partly paid or fully paid, then only its remaining balance is outstanding', async () => {
    const org = await newOrganization(sandbox);
    const account = await seedAccount(sandbox, org, 'Paying Co');
    await seedInvoice(sandbox, account, '100.00', 10, { paidAmount: '40.25' });
    await seedInvoice(sandbox, account, '70.00', 10, { paidAmount: '70.00' });
    const r = await aging(org);
    expect(euro(r.body).buckets.days1To30).toBe('59.75');
    expect(euro(r.body).total).toBe('59.75');
  });

  it('when accounts use different currencies, then amounts are reported per currency and never mixed', async () => {
    const org = await newOrganization(sandbox);
    const eur = await seedAccount(sandbox, org, 'Euro Co');
    const usd = await seedAccount(sandbox, org, 'Dollar Co', { currencyCode: 'USD' });
    await seedInvoice(sandbox, eur, '100.00', 5);
    await seedInvoice(sandbox, usd, '40.00', 5);
    await seedCreditNote(sandbox, usd, '10.00');
    const r = await aging(org);
    expect(r.body.currencies.map((c: any) => c.currencyCode)).toEqual(['EUR', 'USD']);
    expect(euro(r.body).buckets.days1To30).toBe('100.00');
    const dollars = r.body.currencies.find((c: any) => c.currencyCode === 'USD');
    expect(dollars.buckets.days1To30).toBe('30.00');
    expect(dollars.total).toBe('30.00');
  });

  it('when an unallocated credit note exists, then it reduces the oldest bucket first', async () => {
    const org = await newOrganization(sandbox);
    const account = await seedAccount(sandbox, org, 'Credit Co');
    await seedInvoice(sandbox, account, '100.00', -5);
    await seedInvoice(sandbox, account, '100.00', 10);
    await seedInvoice(sandbox, account, '100.00', 120);
    await seedCreditNote(sandbox, account, '30.00');
    const r = await aging(org);
    expect(euro(r.body).buckets).toEqual({ ...ZERO, notDue: '100.00', days1To30: '100.00', over90: '70.00' });
    expect(euro(r.body).total).toBe('270.00');
  });

  it('when credit exceeds the oldest bucket, then the rest spills over to the next younger buckets in order', async () => {
    const org = await newOrganization(sandbox);
    const account = await seedAccount(sandbox, org, 'Spill Co');
    await seedInvoice(sandbox, account, '50.00', 100);
    await seedInvoice(sandbox, account, '40.00', 45);
    await seedInvoice(sandbox, account, '100.00', 15);
    await seedInvoice(sandbox, account, '100.00', 0);
    // 150 of credit: 50 empties over90, 61-90 holds nothing, 40 empties 31-60, the last 60 come off 1-30.
    await seedCreditNote(sandbox, account, '100.00');
    await seedCreditNote(sandbox, account, '80.00', '30.00');
    const r = await aging(org);
    expect(euro(r.body).buckets).toEqual({ ...ZERO, notDue: '100.00', days1To30: '40.00' });
    expect(euro(r.body).unallocatedCredit).toBe('0.00');
    expect(euro(r.body).total).toBe('140.00');
  });

  it('when credit exceeds every bucket, then the surplus is reported as unallocatedCredit and the total goes negative', async () => {
    const org = await newOrganization(sandbox);
    const account = await seedAccount(sandbox, org, 'Surplus Co');
    await seedInvoice(sandbox, account, '20.00', 3);
    await seedCreditNote(sandbox, account, '50.00');
    const r = await aging(org);
    expect(euro(r.body)).toEqual({
      currencyCode: 'EUR',
      buckets: ZERO,
      unallocatedCredit: '30.00',
      total: '-30.00',
    });
  });

  it('when the sandbox clock moves on, then the same invoice ages into an older bucket', async () => {
    const org = await newOrganization(sandbox);
    const account = await seedAccount(sandbox, org, 'Clock Co');
    await seedInvoice(sandbox, account, '10.00', 30);
    expect(euro((await aging(org)).body).buckets.days1To30).toBe('10.00');
    clock.advance(86_400_000);
    try {
      const r = await aging(org);
      expect(euro(r.body).buckets).toEqual({ ...ZERO, days31To60: '10.00' });
    } finally {
      clock.set(NOW);
    }
  });

  it('when organizationId is missing or not a UUID, then 400 names the parameter', async () => {
    const missing = await sandbox.call('GET', '/aging-balance');
    expect(missing.status).toBe(400);
    expect(missing.body.message).toContain('organizationId');
    const invalid = await aging('not-a-uuid');
    expect(invalid.status).toBe(400);
    expect(invalid.body.message).toContain('organizationId');
  });

  it('when the organization is unknown or not the caller’s, then 404', async () => {
    const foreign = await sandbox.admin('POST', '/organizations', { name: 'Foreign', memberUserIds: [] });
    expect((await aging(foreign.id)).status).toBe(404);
    expect((await aging('00000000-0000-4000-8000-000000000000')).status).toBe(404);
  });

  it('when the token lacks accounts:read and accounts:all, then 403; with accounts:read, then 200', async () => {
    const profileOnly = await tokenWith(sandbox, ['profile']);
    const denied = await aging(sandbox.organizationId, profileOnly);
    expect(denied.status).toBe(403);
    const reader = await tokenWith(sandbox, ['accounts:read']);
    expect((await aging(sandbox.organizationId, reader)).status).toBe(200);
  });
});

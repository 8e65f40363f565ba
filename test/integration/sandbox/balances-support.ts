import { ManualClock } from '../../../src/domain/clock.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';

/**
 * Shared helpers of the balances*, communications* and tasks* tests: a sandbox on a manual
 * clock and seeders for accounts, documents, communications and tasks (admin routes).
 */

/** The sandbox clock of these tests: "today" is 2026-03-01 (UTC). */
export const NOW = '2026-03-01T12:00:00.000Z';
const TODAY_MS = Date.UTC(2026, 2, 1);

export interface DateParts {
  year: number;
  month: number;
  day: number;
}

/** The calendar day `n` days before today (negative = in the future). */
export function daysAgo(n: number): DateParts {
  const d = new Date(TODAY_MS - n * 86_400_000);
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

export const isoDaysAgo = (n: number): string =>
  new Date(TODAY_MS - n * 86_400_000).toISOString().slice(0, 10);

export async function startClockedSandbox(): Promise<{ sandbox: TestSandbox; clock: ManualClock }> {
  const clock = new ManualClock(NOW);
  return { sandbox: await startTestSandbox({ clock }), clock };
}

/** A fresh organization of the seeded user, so each test sees only its own records. */
export async function newOrganization(sandbox: TestSandbox, name = 'Balances Org'): Promise<string> {
  const org = await sandbox.admin('POST', '/organizations', {
    name,
    memberUserIds: [sandbox.seeded.user.id],
  });
  return org.id;
}

export async function seedAccount(
  sandbox: TestSandbox,
  organizationId: string,
  fullName: string,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const account = await sandbox.admin('POST', '/accounts', {
    organizationId,
    fullName,
    currencyCode: 'EUR',
    ...extra,
  });
  return account.id;
}

/** An invoice due `dueDaysAgo` days before today. */
export async function seedInvoice(
  sandbox: TestSandbox,
  accountId: string,
  totalAmount: string,
  dueDaysAgo: number,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const doc = await sandbox.admin('POST', '/documents', {
    accountId,
    kind: 'invoice',
    totalAmount,
    paidAmount: '0',
    issuedDate: daysAgo(dueDaysAgo + 30),
    dueDate: daysAgo(dueDaysAgo),
    ...extra,
  });
  return doc.id;
}

/** A credit note of which `allocated` is already allocated. */
export async function seedCreditNote(
  sandbox: TestSandbox,
  accountId: string,
  totalAmount: string,
  allocated = '0',
): Promise<string> {
  const doc = await sandbox.admin('POST', '/documents', {
    accountId,
    kind: 'creditNote',
    totalAmount,
    paidAmount: allocated,
    issuedDate: daysAgo(5),
  });
  return doc.id;
}

/** An access token of the seeded user holding only `scopes`. */
export async function tokenWith(sandbox: TestSandbox, scopes: string[]): Promise<string> {
  const minted = await sandbox.admin('POST', '/tokens', { scopes, userId: sandbox.seeded.user.id });
  return minted.accessToken;
}

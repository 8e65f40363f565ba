import type { FastifyInstance, FastifyRequest } from 'fastify';
import { formatDecimal, parseDecimal } from '../../domain/decimal.js';
import { authOf, requires, type SandboxDeps } from '../context.js';
import { compareStrings } from '../lists/filter-values.js';
import type { Account, DocumentRecord } from '../model.js';
import { ACCOUNTS_READ, type Scope } from '../oauth/scopes.js';
import {
  balancesOf,
  collectionStatusOf,
  creditNoteStatus,
  dayKey,
  documentsOf,
  invoiceStatus,
  remainingUnits,
  todayKey,
} from '../resources/derived.js';
import { daysPastDue } from './balance-amounts.js';

/** The dunning view's scope is not shown: the account readers plus the dunning scope. */
const DUNNING_READ: readonly Scope[] = ['accounts:read', 'accounts:all', 'dunning:manage'];

const accountOfPath = (request: FastifyRequest, deps: SandboxDeps): Account =>
  deps.store.accountFor((request.params as { accountId: string }).accountId, authOf(request).userId);

const sumOf = (docs: readonly DocumentRecord[], amount: (doc: DocumentRecord) => bigint): string =>
  formatDecimal(docs.reduce((sum, doc) => sum + amount(doc), 0n));

/** Invoices by due date (an invoice without one sorts by its issue date), then number. */
const byDueDate = (a: DocumentRecord, b: DocumentRecord): number =>
  compareStrings(dayKey(a.dueDate ?? a.issuedDate), dayKey(b.dueDate ?? b.issuedDate)) ||
  compareStrings(a.number, b.number);

/**
 * One installment per invoice, paid ones included, at its due date (payment schedules are not
 * modelled). `past` = the due date is before today.
 */
function installmentJson(doc: DocumentRecord, today: Date) {
  const days = daysPastDue(doc, today);
  return {
    documentId: doc.id,
    number: doc.number,
    issuedDate: dayKey(doc.issuedDate),
    dueDate: doc.dueDate === null ? null : dayKey(doc.dueDate),
    amount: formatDecimal(parseDecimal(doc.totalAmount)),
    paidAmount: formatDecimal(parseDecimal(doc.paidAmount)),
    remainingBalance: formatDecimal(remainingUnits(doc)),
    status: invoiceStatus(doc, today),
    past: days > 0,
    daysOverdue: days > 0 && remainingUnits(doc) > 0n ? days : 0,
  };
}

function creditNoteJson(doc: DocumentRecord) {
  return {
    documentId: doc.id,
    number: doc.number,
    issuedDate: dayKey(doc.issuedDate),
    amount: formatDecimal(parseDecimal(doc.totalAmount)),
    allocatedAmount: formatDecimal(parseDecimal(doc.paidAmount)),
    remainingAmount: formatDecimal(remainingUnits(doc)),
    status: creditNoteStatus(doc),
  };
}

/** The balance explanation: totals, every invoice installment past and future, the credit notes. */
function financialOverview(account: Account, docs: readonly DocumentRecord[], today: Date) {
  const invoices = docs.filter((d) => d.kind === 'invoice').sort(byDueDate);
  const creditNotes = docs.filter((d) => d.kind === 'creditNote').sort(byDueDate);
  const balances = balancesOf(docs, today);
  const open = invoices.reduce((sum, doc) => sum + remainingUnits(doc), 0n);
  return {
    accountId: account.id,
    accountName: account.fullName,
    currencyCode: account.currencyCode,
    asOf: todayKey(today),
    totals: {
      invoicedAmount: sumOf(invoices, (d) => parseDecimal(d.totalAmount)),
      paidAmount: sumOf(invoices, (d) => parseDecimal(d.paidAmount)),
      openInvoiceAmount: formatDecimal(open),
      overdueBalance: balances.overdueBalance,
      notDueAmount: formatDecimal(open - parseDecimal(balances.overdueBalance)),
      unallocatedCredit: sumOf(creditNotes, remainingUnits),
      remainingBalance: balances.remainingBalance,
    },
    installments: invoices.map((doc) => installmentJson(doc, today)),
    creditNotes: creditNotes.map(creditNoteJson),
  };
}

/** The dunning state of an account; `collectionStatus` is the value the `/accounts` filter uses. */
function dunningJson(account: Account, docs: readonly DocumentRecord[], today: Date) {
  return {
    accountId: account.id,
    organizationId: account.organizationId,
    collectionStatus: collectionStatusOf(account, docs),
    dunningPaused: account.dunningPaused,
    currencyCode: account.currencyCode,
    ...balancesOf(docs, today),
  };
}

/** Per-account balance views: `/accounts/{accountId}/financial-overview` and `/dunning`. */
export function registerAccountBalanceRoutes(app: FastifyInstance, deps: SandboxDeps): void {
  const { store } = deps;
  app.get('/accounts/:accountId/financial-overview', requires(ACCOUNTS_READ), async (request) => {
    const account = accountOfPath(request, deps);
    return financialOverview(account, documentsOf(store, account.id), store.clock.now());
  });

  app.get('/accounts/:accountId/dunning', requires(DUNNING_READ), async (request) => {
    const account = accountOfPath(request, deps);
    return dunningJson(account, documentsOf(store, account.id), store.clock.now());
  });
}

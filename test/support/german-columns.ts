import type { ColumnSourceSetting } from '../../src/config/csv-format-schema.js';

/**
 * The invoice columns of the small German-ERP-like header the CSV shape tests share
 * (`Nr;Kunde;Datum;Fällig;Brutto;MwSt;...`).
 */
export const GERMAN_INVOICE_COLUMNS: Record<string, ColumnSourceSetting> = {
  sourceId: 'Nr',
  number: 'Nr',
  accountSourceId: 'Kunde',
  issuedDate: 'Datum',
  dueDate: 'Fällig',
  totalAmount: 'Brutto',
  taxAmount: 'MwSt',
};

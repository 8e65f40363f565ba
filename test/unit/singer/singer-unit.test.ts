import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { singerSettingsSchema } from '../../../src/config/singer-source-schema.js';
import { SingerUnit } from '../../../src/sources/singer/singer-unit.js';
import type { SourceBatch } from '../../../src/sources/source.js';

const logger = pino({ level: 'silent' });

const settings = (overrides: Record<string, unknown> = {}) =>
  singerSettingsSchema.parse({
    streams: {
      contacts: {
        kind: 'accounts',
        columns: {
          sourceId: 'ContactID',
          fullName: 'Name',
          currencyCode: 'DefaultCurrency',
          'billingAddress.city': 'Addresses.0.City',
        },
      },
      invoices: {
        kind: 'invoices',
        skip: [{ column: 'Type', equals: 'ACCPAY' }],
        columns: {
          sourceId: 'InvoiceID',
          number: 'InvoiceNumber',
          accountSourceId: 'Contact.ContactID',
          issuedDate: 'Date',
          dueDate: 'DueDate',
          totalAmount: 'Total',
          taxAmount: 'TotalTax',
          paidAmount: 'AmountPaid',
        },
      },
    },
    batchSize: 2,
    ...overrides,
  });

const schema = (stream: string, properties: Record<string, unknown>) => ({
  type: 'SCHEMA',
  stream,
  key_properties: [],
  schema: { type: 'object', properties },
});
const contact = (id: string, name = `Contact ${id}`) => ({
  type: 'RECORD',
  stream: 'contacts',
  record: {
    ContactID: id,
    Name: name,
    DefaultCurrency: 'gbp',
    Addresses: [{ AddressType: 'POBOX', City: 'Oxford' }],
  },
});
const invoice = (id: string, contactId: string, extra: Record<string, unknown> = {}) => ({
  type: 'RECORD',
  stream: 'invoices',
  record: {
    InvoiceID: id,
    InvoiceNumber: `INV-${id}`,
    Type: 'ACCREC',
    Contact: { ContactID: contactId },
    Date: '2026-01-19T00:00:00',
    DueDate: '2026-02-18T00:00:00',
    Total: 1250.1,
    TotalTax: 208.35,
    AmountPaid: 0.0,
    ...extra,
  },
});
const state = (n: number) => ({ type: 'STATE', value: { bookmarks: { at: n } } });

/** Lines as a tap writes them (numbers as Python's json writes them: 0.0, 1250.1). */
const linesOf = (messages: readonly unknown[]) =>
  messages.map((m) =>
    typeof m === 'string' ? m : JSON.stringify(m).replace(/"AmountPaid":0([,}])/, '"AmountPaid":0.0$1'),
  );

interface Run {
  batches: SourceBatch[];
  /** What was reached after each batch was processed: the states echoed so far. */
  echoed: unknown[][];
  stored: unknown[];
  stopped: number;
  unit: SingerUnit;
}

/** Drains a unit the way the engine does: each batch processed, then `failed`, then the next. */
async function run(
  messages: readonly unknown[],
  options: { settings?: ReturnType<typeof settings>; finished?: () => Promise<void> } = {},
): Promise<Run> {
  const echoed: unknown[] = [];
  const stored: unknown[] = [];
  const result: Run = { batches: [], echoed: [], stored, stopped: 0, unit: undefined as never };
  async function* lines() {
    yield* linesOf(messages);
  }
  const unit = new SingerUnit({
    sourceId: 'xero',
    settings: options.settings ?? settings(),
    input: {
      lines: lines(),
      finished: options.finished ?? (async () => {}),
      stop: async () => {
        result.stopped++;
      },
      label: 'tap',
    },
    onState: async (value) => {
      echoed.push(value);
    },
    storeState: async (value) => {
      stored.push(value);
    },
    logger,
  });
  result.unit = unit;
  for await (const batch of unit.batches()) {
    result.batches.push(batch);
    await unit.failed();
    result.echoed.push([...echoed]);
  }
  await unit.complete();
  result.echoed.push([...echoed]);
  return result;
}

const keys = (batch: SourceBatch) => batch.records.map((r) => `${r.record.kind}:${r.record.sourceId}`);

describe('a Singer run as a unit', () => {
  it('reads amounts as the tap wrote them, nested paths, array elements, and the date of a date-time', async () => {
    const { batches } = await run([
      schema('contacts', {}),
      schema('invoices', {}),
      contact('C1'),
      invoice('I1', 'C1'),
    ]);
    const [account, document] = batches.flatMap((b) => b.records.map((r) => r.record));
    expect(account).toMatchObject({
      kind: 'account',
      sourceId: 'C1',
      currencyCode: 'GBP',
      billingAddress: { city: 'Oxford' },
    });
    expect(document).toMatchObject({
      kind: 'invoice',
      accountSourceId: 'C1',
      issuedDate: { year: 2026, month: 1, day: 19 },
      dueDate: { year: 2026, month: 2, day: 18 },
      totalAmount: '1250.1',
      taxAmount: '208.35',
      paidAmount: '0', // 0.0 is the integer 0: its text needs no keeping
    });
  });

  it('refuses a float no exact decimal of six places gives, naming its path', async () => {
    const { batches } = await run([contact('C1'), invoice('I1', 'C1', { Total: 0.1234567 })]);
    const rejected = batches.flatMap((b) => b.rejected);
    expect(rejected).toHaveLength(1);
    expect(rejected[0]).toMatchObject({ sourceKey: 'I1', line: 2 });
    expect(rejected[0]!.reason).toContain('Total (totalAmount)');
    expect(rejected[0]!.reason).toContain('0.1234567');
  });

  it('holds a document that comes before its account until the account came, and syncs the account first', async () => {
    const { batches } = await run([invoice('I1', 'C1'), invoice('I2', 'C2'), contact('C2'), contact('C1')]);
    const order = batches.flatMap(keys);
    expect(order).toEqual(['account:C2', 'invoice:I2', 'account:C1', 'invoice:I1']);
  });

  it('sends a document whose account never comes at the end of the input (the engine then fails it)', async () => {
    const { batches, unit } = await run([invoice('I1', 'C9'), contact('C1'), invoice('I2', 'C1')]);
    expect(batches.flatMap(keys)).toEqual(['account:C1', 'invoice:I2', 'invoice:I1']);
    expect(unit.stats.held).toBe(1);
  });

  it('reaches a STATE only once every record before it was processed, a held one included', async () => {
    const { echoed, stored } = await run([
      contact('C1'),
      contact('C2'),
      state(1),
      invoice('I1', 'C3'),
      contact('C4'),
      state(2),
      contact('C5'),
      contact('C6'),
      state(3),
      contact('C3'),
    ]);
    // Batches of 2: [C1 C2]; then I1 is held for C3, so [C4 C5] reaches state 1 alone (state 2
    // comes after I1); [C6 C3 I1] reaches states 2 and 3: the latest is echoed.
    expect(echoed[0]).toEqual([]);
    expect(echoed[1]).toEqual([{ bookmarks: { at: 1 } }]);
    expect(echoed[2]).toEqual([{ bookmarks: { at: 1 } }, { bookmarks: { at: 3 } }]);
    expect(echoed.at(-1)).toEqual([{ bookmarks: { at: 1 } }, { bookmarks: { at: 3 } }]);
    expect(stored).toEqual([{ bookmarks: { at: 3 } }]);
  });

  it('skips and counts the records a rule names, ignores unnamed streams and unknown message types', async () => {
    const { batches, unit } = await run([
      contact('C1'),
      invoice('B1', 'C1', { Type: 'ACCPAY' }),
      { type: 'RECORD', stream: 'payments', record: { PaymentID: 'P1' } },
      { type: 'ACTIVATE_VERSION', stream: 'contacts', version: 1 },
      { type: 'BATCH', stream: 'contacts', filepath: '/x' },
      invoice('I1', 'C1'),
    ]);
    expect(batches.flatMap(keys)).toEqual(['account:C1', 'invoice:I1']);
    expect(unit.skippedRows).toBe(1);
    expect(unit.stats.ignored).toEqual({ payments: 1 });
    expect(unit.stats.otherMessages).toEqual({ ACTIVATE_VERSION: 1, BATCH: 1 });
  });

  it('refuses a record that does not match its SCHEMA, with the field', async () => {
    const { batches } = await run([
      contact('C1'),
      schema('invoices', { Total: { type: ['null', 'number'] } }),
      invoice('I1', 'C1', { Total: 'a lot' }),
    ]);
    expect(batches.flatMap((b) => b.rejected)[0]!.reason).toContain(
      "does not match its stream's SCHEMA: Total must be null,number",
    );
  });

  it('keeps the later of two copies of one record in a batch', async () => {
    const { batches } = await run([contact('C1', 'Old name'), contact('C1', 'New name')], {
      settings: settings({ batchSize: 10 }),
    });
    expect(batches[0]!.records.map((r) => (r.record as { fullName: string }).fullName)).toEqual(['New name']);
  });

  it('stops at a line that is not JSON, stopping the tap; no STATE is stored', async () => {
    const unit = run([contact('C1'), state(1), '{"type": "RECORD", "stream": "contacts", "rec']);
    await expect(unit).rejects.toThrow(/line 3 of the tap's output is not JSON/);
  });

  it('stores nothing when the tap failed at its end, and gives its error', async () => {
    const failing = run([contact('C1'), state(1)], {
      finished: async () => {
        throw new Error('the tap exited with code 1');
      },
    });
    await expect(failing).rejects.toThrow('exited with code 1');
  });

  it('reads an array element chosen by a field, the first of several joined groups', async () => {
    const xero = settings({
      streams: {
        contacts: {
          kind: 'accounts',
          columns: {
            sourceId: 'ContactID',
            fullName: 'Name',
            currencyCode: { first: ['DefaultCurrency'], otherwise: 'GBP' },
            'billingAddress.street': {
              first: [
                ['Addresses[AddressType=POBOX].AddressLine1', 'Addresses[AddressType=POBOX].AddressLine2'],
                ['Addresses[AddressType=street].AddressLine1', 'Addresses[AddressType=street].AddressLine2'],
              ],
            },
            'billingAddress.city': 'Addresses[AddressType=STREET].City',
          },
        },
      },
    });
    const addresses = (pobox: Record<string, string>) => [
      { AddressType: 'STREET', AddressLine1: '3 Merrion Square', AddressLine2: 'North', City: 'Dublin' },
      { AddressType: 'POBOX', AddressLine1: '', AddressLine2: '', City: '', ...pobox },
    ];
    const { batches } = await run(
      [
        {
          type: 'RECORD',
          stream: 'contacts',
          record: { ContactID: 'A', Name: 'A', Addresses: addresses({}) },
        },
        {
          type: 'RECORD',
          stream: 'contacts',
          record: {
            ContactID: 'B',
            Name: 'B',
            DefaultCurrency: '',
            Addresses: addresses({ AddressLine1: 'PO Box 7' }),
          },
        },
      ],
      { settings: xero },
    );
    const [a, b] = batches.flatMap((x) => x.records.map((r) => r.record)) as Array<{
      currencyCode: string;
      billingAddress: { street: string; city: string };
    }>;
    expect(a).toMatchObject({
      currencyCode: 'GBP',
      billingAddress: { street: '3 Merrion Square, North', city: 'Dublin' },
    });
    expect(b!.billingAddress.street).toBe('PO Box 7');
  });

  it('makes a negative invoice a credit note with positive amounts when negativeIsCreditNote says so', async () => {
    const stripe = settings({
      streams: {
        invoices: {
          kind: 'invoices',
          minorUnits: true,
          negativeIsCreditNote: true,
          columns: {
            sourceId: 'id',
            number: 'number',
            accountSourceId: 'customer',
            issuedDate: 'created',
            dueDate: { first: ['due_date', 'created'] },
            totalAmount: 'total',
            taxAmount: 'tax',
            paidAmount: 'amount_paid',
          },
        },
      },
    });
    const invoice = (id: string, total: number, tax: number) => ({
      type: 'RECORD',
      stream: 'invoices',
      record: {
        id,
        number: id,
        customer: 'cus_1',
        created: '2025-04-02T08:15:22.000000Z',
        due_date: null,
        total,
        tax,
        amount_paid: 0,
      },
    });
    const { batches } = await run([invoice('in_1', -29750, -4750), invoice('in_2', 12000, 2000)], {
      settings: stripe,
    });
    expect(batches.flatMap((b) => b.records.map((r) => r.record))).toMatchObject([
      { kind: 'creditNote', sourceId: 'in_1', totalAmount: '297.50', taxAmount: '47.50' },
      { kind: 'invoice', sourceId: 'in_2', totalAmount: '120.00', taxAmount: '20.00' },
    ]);
  });

  it('says where to name a required column the configuration does not place and the record lacks', async () => {
    const bare = settings({
      streams: { contacts: { kind: 'accounts', columns: { sourceId: 'ContactID' } } },
    });
    const { batches } = await run([contact('C1')], { settings: bare });
    expect(batches[0]!.rejected[0]!.reason).toContain(
      'fullName: required value is empty: the record has no "fullName" field; name the field that holds it in streams.contacts.columns.fullName',
    );
  });
});

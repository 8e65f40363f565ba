import { describe, expect, it } from 'vitest';
import { documentFormFields } from '../../../src/api/endpoints/documents.js';
import { encodeMultipart, type MultipartField } from '../../../src/api/multipart.js';

const pdf = Buffer.from('%PDF-1.4\nhello\n%%EOF\n');
const fields = (): MultipartField[] => [
  { name: 'number', value: 'INV-1' },
  {
    name: 'file',
    file: { bytes: new Uint8Array(pdf), filename: 'inv-1.pdf', contentType: 'application/pdf' },
  },
];

describe('multipart bodies', () => {
  it('when the same fields are encoded twice, then the bytes and boundary are identical', () => {
    const a = encodeMultipart(fields());
    const b = encodeMultipart(fields());
    expect(Buffer.compare(a.bytes, b.bytes)).toBe(0);
    expect(a.contentType).toBe(b.contentType);
    expect(a.contentType).toBe(`multipart/form-data; boundary=${a.boundary}`);
  });

  it('when a field changes, then the boundary changes with the content', () => {
    const other = fields();
    other[0] = { name: 'number', value: 'INV-2' };
    expect(encodeMultipart(other).boundary).not.toBe(encodeMultipart(fields()).boundary);
  });

  it('when encoded, then it is RFC 7578 that a standard parser reads back', async () => {
    const body = encodeMultipart(fields());
    const text = body.bytes.toString('latin1');
    expect(text).toContain(
      `--${body.boundary}\r\nContent-Disposition: form-data; name="number"\r\n\r\nINV-1\r\n`,
    );
    expect(text).toContain('name="file"; filename="inv-1.pdf"\r\nContent-Type: application/pdf\r\n\r\n');
    expect(text.endsWith(`--${body.boundary}--\r\n`)).toBe(true);
    const form = await new Response(new Uint8Array(body.bytes), {
      headers: { 'content-type': body.contentType },
    }).formData();
    expect(form.get('number')).toBe('INV-1');
    const file = form.get('file') as File;
    expect(file.name).toBe('inv-1.pdf');
    expect(Buffer.from(await file.arrayBuffer()).equals(pdf)).toBe(true);
  });

  it('when a name holds a line break, then it is refused instead of injecting a header', () => {
    expect(() => encodeMultipart([{ name: 'a\r\nX-Evil: 1', value: 'v' }])).toThrow(/line break/);
  });

  it('when a document form is built, then dates travel as parts and nulls are left out', () => {
    const form = documentFormFields({
      accountId: 'acc',
      number: 'INV-9',
      issuedDate: { year: 2026, month: 1, day: 5 },
      dueDate: { year: 2026, month: 2, day: 4 },
      totalAmount: '120.00',
      taxAmount: '20.00',
      billingAddress: { street: '1 rue X', city: null, postalCode: '75001', country: 'FR' },
      file: { bytes: pdf, filename: 'inv.pdf' },
      sourceId: 'src-9',
    });
    expect(
      form.map((f) => ('value' in f ? `${f.name}=${f.value}` : `${f.name}=<${f.file.contentType}>`)),
    ).toEqual([
      'accountId=acc',
      'number=INV-9',
      'issuedDate.year=2026',
      'issuedDate.month=1',
      'issuedDate.day=5',
      'dueDate.year=2026',
      'dueDate.month=2',
      'dueDate.day=4',
      'totalAmount=120.00',
      'taxAmount=20.00',
      'billingAddress.street=1 rue X',
      'billingAddress.postalCode=75001',
      'billingAddress.country=FR',
      'sourceId=src-9',
      'file=<application/pdf>',
    ]);
  });
});

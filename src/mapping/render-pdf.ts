import type { DateParts } from '../domain/records.js';
import type { DocumentRecord } from './document-payload.js';

const iso = (d: DateParts) =>
  `${d.year}-${String(d.month).padStart(2, '0')}-${String(d.day).padStart(2, '0')}`;

/**
 * A one-page PDF rendered from the row, for documents dropped without a file. Deterministic: the
 * same row gives the same bytes (fixed creation date), so a retried or resumed create sends an
 * identical body under its Idempotency-Key.
 */
export async function renderDocumentPdf(record: DocumentRecord, accountName: string): Promise<Buffer> {
  // Loaded at the first document to render: a pass with nothing to create never needs it.
  const { default: PDFDocument } = await import('pdfkit');
  const title = `${record.kind === 'invoice' ? 'Invoice' : 'Credit note'} ${record.number}`;
  const doc = new PDFDocument({
    size: 'A4',
    margin: 56,
    info: {
      Title: title,
      Producer: 'receivables-sync',
      Creator: 'receivables-sync',
      CreationDate: new Date(`${iso(record.issuedDate)}T00:00:00Z`),
    },
  });
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  doc.fontSize(20).text(title);
  doc.moveDown().fontSize(11);
  doc.text(`Customer: ${accountName}`);
  doc.text(`Issued: ${iso(record.issuedDate)}`);
  if (record.kind === 'invoice') doc.text(`Due: ${iso(record.dueDate)}`);
  doc.text(`Total: ${record.totalAmount}`);
  doc.text(`Tax: ${record.taxAmount}`);
  doc
    .moveDown()
    .fontSize(8)
    .fillColor('#666')
    .text(`Reference ${record.sourceId}. Rendered by receivables-sync from the source row.`);
  doc.end();
  return done;
}

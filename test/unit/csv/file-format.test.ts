import { describe, expect, it } from 'vitest';
import {
  bomEncoding,
  detectDelimiter,
  kindFormat,
  oneCellHint,
  settleEncoding,
} from '../../../src/sources/csv/file-format.js';

describe('kindFormat', () => {
  it('when nothing is configured, then files are in the contract format', () => {
    expect(kindFormat({}, 'invoices')).toEqual({
      encoding: 'utf-8',
      delimiter: ',',
      number: { decimalSeparator: '.', thousandsSeparator: '', minorUnits: null },
      dateFormat: 'yyyy-MM-dd',
      headerLine: 1,
    });
  });

  it('when format and formats.<kind> are both set, then the kind keeps the format and overrides what it names', () => {
    const config = {
      format: {
        encoding: 'windows-1252',
        delimiter: ';',
        decimalSeparator: ',',
        thousandsSeparator: '.',
        dateFormat: 'dd.MM.yyyy',
        headerLine: 3,
      },
      formats: { accounts: { delimiter: ',', encoding: undefined, headerLine: 1 } },
    } as const;
    expect(kindFormat(config, 'accounts')).toEqual({
      encoding: 'windows-1252',
      delimiter: ',',
      number: { decimalSeparator: ',', thousandsSeparator: '.', minorUnits: null },
      dateFormat: 'dd.MM.yyyy',
      headerLine: 1,
    });
    expect(kindFormat(config, 'invoices')).toMatchObject({ delimiter: ';', headerLine: 3 });
  });

  it('when rows.<kind>.minorUnits is set, then only that kind reads amounts in minor units', () => {
    const config = { rows: { invoices: { minorUnits: 2 }, creditNotes: { minorUnits: 0 } } };
    expect(kindFormat(config, 'invoices').number.minorUnits).toBe(2);
    expect(kindFormat(config, 'creditNotes').number.minorUnits).toBe(0);
    expect(kindFormat(config, 'accounts').number.minorUnits).toBeNull();
  });
});

describe('encodings', () => {
  it('when a file starts with a byte order mark, then it names the encoding', () => {
    expect(bomEncoding(new Uint8Array([0xef, 0xbb, 0xbf, 0x61]))).toBe('utf-8');
    expect(bomEncoding(new Uint8Array([0xff, 0xfe, 0x61, 0x00]))).toBe('utf-16le');
    expect(bomEncoding(new Uint8Array([0xfe, 0xff, 0x00, 0x61]))).toBe('utf-16be');
  });

  it('when a file has no byte order mark, or only part of one, then there is none', () => {
    expect(bomEncoding(new Uint8Array([0x61, 0x62]))).toBeNull();
    expect(bomEncoding(new Uint8Array([0xef, 0xbb]))).toBeNull();
    expect(bomEncoding(new Uint8Array([]))).toBeNull();
  });

  it('when a file has a byte order mark, then it wins over the configured encoding', () => {
    expect(settleEncoding('windows-1252', 'utf-8', false)).toBe('utf-8');
    expect(settleEncoding('auto', 'utf-16le', false)).toBe('utf-16le');
  });

  it('when the encoding is configured and there is no mark, then the configured one is used', () => {
    expect(settleEncoding('iso-8859-1', null, true)).toBe('iso-8859-1');
  });

  it('when the encoding is auto, then a valid UTF-8 file is UTF-8 and any other Windows-1252', () => {
    expect(settleEncoding('auto', null, true)).toBe('utf-8');
    expect(settleEncoding('auto', null, false)).toBe('windows-1252');
  });
});

describe('detectDelimiter', () => {
  it('when the header is separated by semicolons, tabs or pipes, then that is the delimiter', () => {
    expect(detectDelimiter('Rechnungsnummer;Kunde;Brutto')).toBe(';');
    expect(detectDelimiter('number\tcustomer\ttotal')).toBe('\t');
    expect(detectDelimiter('number|customer|total')).toBe('|');
  });

  it('when commas are inside quoted headers of a semicolon file, then they do not count', () => {
    expect(detectDelimiter('"Name, first";"Name, last";"Amount, net";City')).toBe(';');
  });

  it('when two candidates are found as often, or none is, then it is a comma', () => {
    expect(detectDelimiter('a,b;c')).toBe(',');
    expect(detectDelimiter('sourceId')).toBe(',');
  });
});

describe('oneCellHint', () => {
  it('when a header read as one cell holds semicolons, then the hint says to set the delimiter to ";"', () => {
    expect(oneCellHint(['sourceId;fullName;currencyCode'], ',')).toBe(
      'the header was read as one cell, and it holds ";": the file seems separated by it (set format.delimiter: ";", or auto)',
    );
  });

  it('when a header read as one cell holds tabs, then the hint names a tab', () => {
    expect(oneCellHint(['sourceId\tfullName'], ',')).toBe(
      'the header was read as one cell, and it holds a tab ("\\t"): the file seems separated by it (set format.delimiter: "\\t", or auto)',
    );
  });

  it('when the header has several cells, or its one cell holds no other delimiter, then there is no hint', () => {
    expect(oneCellHint(['sourceId;x', 'fullName'], ',')).toBeNull();
    expect(oneCellHint(['sourceId'], ',')).toBeNull();
    expect(oneCellHint(['a;b;c'], ';')).toBeNull();
  });
});

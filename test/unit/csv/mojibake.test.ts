import { describe, expect, it } from 'vitest';
import { MojibakeWatch } from '../../../src/sources/csv/mojibake.js';

const HEADER = ['sourceId', 'fullName'];

/** The warning for a file whose line 7 holds `name`. */
function warningFor(name: string): string | null {
  const watch = new MojibakeWatch();
  watch.check({ line: 7, fields: ['K-1', name] }, HEADER);
  return watch.warning();
}

describe('MojibakeWatch', () => {
  it('when a name is UTF-8 decoded twice, then the warning names its line, column and value', () => {
    expect(warningFor('CafÃ© Central')).toBe(
      'line 7, column "fullName": "CafÃ© Central" looks encoded twice (UTF-8 read as Windows-1252, then saved as UTF-8); it was synced as written: export the file again as UTF-8 from the billing system',
    );
    expect(warningFor('MÃ¼ller GmbH')).toMatch(
      /^line 7, column "fullName": "MÃ¼ller GmbH" looks encoded twice/,
    );
  });

  it('when a euro sign is UTF-8 decoded twice (â‚¬), then it is flagged', () => {
    expect(warningFor('Preis 10 â‚¬')).toEqual(
      expect.stringMatching(/^line 7, column "fullName": "Preis 10 â‚¬" looks encoded twice/),
    );
  });

  it('when text is accented correctly, then there is no warning', () => {
    for (const name of [
      'Café',
      'Müller',
      '€',
      'Zoë',
      'SÃO PAULO LTDA',
      'Ærøskøbing',
      '“quoted”',
      'plain ascii',
    ]) {
      expect(warningFor(name), name).toBeNull();
    }
  });

  it('when a Portuguese name in capitals ends a word in Ã, then there is no warning', () => {
    // Ã followed by a plain space is how MAÇÃ or IRMÃ is written, not a garbled à (that is Ã and a no-break space).
    for (const name of ['MAÇÃ VERDE LTDA', 'IRMÃ SILVA & FILHOS']) expect(warningFor(name), name).toBeNull();
  });

  it('when several values look encoded twice, then the first is quoted and the others counted', () => {
    const watch = new MojibakeWatch();
    watch.check({ line: 3, fields: ['K-1', 'Café'] }, HEADER);
    watch.check({ line: 4, fields: ['KÃ¶ln', 'MÃ¼ller'] }, HEADER);
    watch.check({ line: 5, fields: ['K-3', 'Ã…ngstrÃ¶m', 'extra cell'] }, HEADER);
    expect(watch.warning()).toMatch(
      /^line 4, column "sourceId": "KÃ¶ln" looks encoded twice .* \(and 2 more\);/,
    );
  });

  it('when the value sits past the header, then the column is named by its position', () => {
    const watch = new MojibakeWatch();
    watch.check({ line: 2, fields: ['K-1', 'x', 'CafÃ©'] }, HEADER);
    expect(watch.warning()).toMatch(/^line 2, column "#3":/);
  });
});

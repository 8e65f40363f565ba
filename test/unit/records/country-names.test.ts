import { describe, expect, it } from 'vitest';
import { countryCodeOf } from '../../../src/records/country-names.js';

describe('countryCodeOf', () => {
  it('when a country is named in English, German, French or Spanish, then it gives its alpha-2 code', () => {
    const names: Array<[string, string]> = [
      ['Germany', 'DE'],
      ['Deutschland', 'DE'],
      ['Allemagne', 'DE'],
      ['United Kingdom', 'GB'],
      ['Royaume-Uni', 'GB'],
      ['Vereinigtes Königreich', 'GB'],
      ['España', 'ES'],
      ['Schweiz', 'CH'],
      ['Netherlands', 'NL'],
    ];
    for (const [name, code] of names) expect(countryCodeOf(name), name).toBe(code);
  });

  it('when a country is written with a short form, another case or extra spaces, then it is found', () => {
    const names: Array<[string, string]> = [
      ['UK', 'GB'],
      ['usa', 'US'],
      ['U.S.A.', 'US'],
      ['Holland', 'NL'],
      ['  germany ', 'DE'],
      ['united  states', 'US'],
    ];
    for (const [name, code] of names) expect(countryCodeOf(name), name).toBe(code);
  });

  it('when a code is written in any case, then it is given upper case', () => {
    expect([countryCodeOf('fr'), countryCodeOf('Gb'), countryCodeOf('DE')]).toEqual(['FR', 'GB', 'DE']);
  });

  it('when the text names no country, or a grouping or code no country has, then it gives null', () => {
    for (const text of ['Atlantis', '', 'EU', 'UN', 'ZZ', 'XX', 'Europe']) {
      expect(countryCodeOf(text), JSON.stringify(text)).toBeNull();
    }
  });

  it('when Turkey is written by its long-standing English name, then it is TR', () => {
    // ICU now names it Türkiye in English; exports still write Turkey.
    expect([countryCodeOf('Turkey'), countryCodeOf('Türkiye')]).toEqual(['TR', 'TR']);
  });
});

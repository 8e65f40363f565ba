/**
 * Countries by the names exports write (`Germany`, `Deutschland`, `United Kingdom`, `Royaume-Uni`,
 * `usa`), from the names ICU knows for every ISO 3166-1 alpha-2 region (`Intl.DisplayNames`) in
 * the languages billing exports are most often written in, accents ignored (`Espana`), and the
 * usual short and older names (`UK`, `USA`, `Turkey`, `Ivory Coast`).
 */
const LANGUAGES = ['en', 'de', 'fr', 'es', 'it', 'nl', 'pt', 'sv', 'da', 'nb', 'pl'] as const;

/** Names ICU does not give but exports do (and the common short forms). */
const MORE_NAMES: Readonly<Record<string, string>> = {
  usa: 'US',
  'u.s.a.': 'US',
  'u.s.': 'US',
  'united states of america': 'US',
  uk: 'GB',
  'u.k.': 'GB',
  'great britain': 'GB',
  england: 'GB',
  scotland: 'GB',
  wales: 'GB',
  'northern ireland': 'GB',
  holland: 'NL',
  'czech republic': 'CZ',
  turkey: 'TR',
  'ivory coast': 'CI',
  'the netherlands': 'NL',
  'the united kingdom': 'GB',
  'the united states': 'US',
  swaziland: 'SZ',
  macedonia: 'MK',
  burma: 'MM',
  'republic of ireland': 'IE',
  'south korea': 'KR',
  russia: 'RU',
};

const NOT_COUNTRIES: ReadonlySet<string> = new Set(['EU', 'EZ', 'UN', 'QO', 'ZZ', 'XA', 'XB']);

let byName: Map<string, string> | undefined;
let codes: Set<string> | undefined;

/** Lower case, accents and apostrophe kinds ignored, spaces collapsed: `Côte d’Ivoire` = `cote d'ivoire`. */
const normal = (name: string): string =>
  name
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .replace(/[’`´]/g, "'")
    .trim()
    .toLowerCase()
    .replace(/\s+/g, ' ');

function namesTable(): Map<string, string> {
  const table = new Map<string, string>(
    Object.entries(MORE_NAMES).map(([name, code]) => [normal(name), code]),
  );
  const letters = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
  const displays = LANGUAGES.map(
    (lang) => new Intl.DisplayNames([lang], { type: 'region', fallback: 'none' }),
  );
  for (const a of letters) {
    for (const b of letters) {
      const code = `${a}${b}`;
      const english = displays[0]!.of(code);
      // Codes ICU does not name, groupings (EU, UN...) and replaced ones (DD, now DE) are no
      // country's code of today: left out.
      if (english === undefined || english === code || NOT_COUNTRIES.has(code)) continue;
      if (Intl.getCanonicalLocales(`und-${code}`)[0] !== `und-${code}`) continue;
      for (const display of displays) {
        const name = display.of(code);
        if (name !== undefined && !table.has(normal(name))) table.set(normal(name), code);
      }
    }
  }
  return table;
}

/** The alpha-2 code of `text` (a code in any case, or a country's name), or null. */
export function countryCodeOf(text: string): string | null {
  const trimmed = text.trim();
  byName ??= namesTable();
  codes ??= new Set(byName.values());
  if (/^[A-Za-z]{2}$/.test(trimmed) && codes.has(trimmed.toUpperCase())) return trimmed.toUpperCase();
  return byName.get(normal(trimmed)) ?? null;
}

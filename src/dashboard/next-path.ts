/** A base no request ever has: only what resolves to it is a path of this dashboard. */
const BASE = 'http://dashboard.invalid';

/**
 * Browsers drop tabs and newlines from URLs and read `\` as `/`, so `/\t/evil.example` or
 * `/\evil.example` would leave the site once followed: controls, whitespace and backslashes are
 * refused outright rather than guessed at (but a plain space, which `URL` encodes).
 */
function hasUnsafeCharacter(text: string): boolean {
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (char === ' ') continue; // kept inside a path or query, where the URL parser encodes it
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f) || char === '\\' || /\s/u.test(char)) return true;
  }
  return false;
}

/**
 * Where to go after signing in (`next`): a path of this dashboard, normalised as a browser would
 * read it, or `/`. It must start with one `/`, carry no control character, whitespace or
 * backslash, resolve to this origin against a fixed base, and not normalise into `//...` (a
 * protocol-relative URL, e.g. from `/..//evil`). The sign-in page itself and the page fragments
 * under `/partials/` are no destinations either.
 *
 * @example safeNext('/sources/erp?x=1') // '/sources/erp?x=1'
 * @example safeNext('/\t/evil.example') // '/'
 */
export function safeNext(raw: unknown): string {
  if (typeof raw !== 'string' || raw.length > 500) return '/';
  if (!raw.startsWith('/') || raw.startsWith('//') || hasUnsafeCharacter(raw)) return '/';
  let url: URL;
  try {
    url = new URL(raw, BASE);
  } catch {
    return '/';
  }
  if (url.origin !== BASE) return '/';
  const path = `${url.pathname}${url.search}${url.hash}`;
  if (!path.startsWith('/') || path.startsWith('//')) return '/';
  if (
    url.pathname === '/login' ||
    url.pathname.startsWith('/login/') ||
    url.pathname.startsWith('/partials/')
  )
    return '/';
  return path;
}

import { describe, expect, it } from 'vitest';
import { safeNext } from '../../../src/dashboard/next-path.js';
import { OPEN_REDIRECTS } from '../../support/open-redirects.js';

describe('the sign-in return path', () => {
  it('when next is a path of this dashboard, then it is kept, normalised as a browser reads it', () => {
    expect(safeNext('/')).toBe('/');
    expect(safeNext('/?notice=x')).toBe('/?notice=x');
    expect(safeNext('/queues')).toBe('/queues');
    expect(safeNext('/sources/erp-csv?kind=invoice#failures')).toBe('/sources/erp-csv?kind=invoice#failures');
    expect(safeNext('/records?q=a b')).toBe('/records?q=a%20b');
    // Encoded slashes stay encoded: a browser never reads them as a second slash.
    expect(safeNext('/%2F%2Fevil.example')).toBe('/%2F%2Fevil.example');
    expect(safeNext('/%09/host')).toBe('/%09/host');
    expect(safeNext('/a/../sources/x')).toBe('/sources/x');
  });

  it('when next would lead elsewhere (another origin, a protocol-relative URL, the sign-in itself), then it is /', () => {
    for (const next of OPEN_REDIRECTS) expect(safeNext(next), JSON.stringify(next)).toBe('/');
    for (const next of [42, undefined, null, ['/queues'], { next: '/' }]) expect(safeNext(next)).toBe('/');
  });
});

import { describe, expect, it } from 'vitest';
import { parseCookies, sessionCookie } from '../../../src/dashboard/cookies.js';
import {
  credentialsMatch,
  isLoopbackHost,
  parseBasicAuthorization,
} from '../../../src/dashboard/credentials.js';
import { safeNext } from '../../../src/dashboard/next-path.js';
import { countsOf } from '../../../src/dashboard/status.js';
import { html, raw } from '../../../src/dashboard/views/html.js';

// The pure pieces the dashboard's routes rely on (no server, no database).
describe('dashboard inputs and rendering', () => {
  it('when values are interpolated into html``, then they are escaped unless built as HTML', () => {
    const evil = `<img src=x onerror="alert('x')">&`;
    expect(html`<td title="${evil}">${evil}</td>`.value).toBe(
      '<td title="&lt;img src=x onerror=&quot;alert(&#39;x&#39;)&quot;&gt;&amp;">&lt;img src=x onerror=&quot;alert(&#39;x&#39;)&quot;&gt;&amp;</td>',
    );
    expect(html`<p>${html`<b>${'a<b'}</b>`}${raw('<br>')}${[1, null, undefined, false, 'x']}</p>`.value).toBe(
      '<p><b>a&lt;b</b><br>1x</p>',
    );
  });

  it('when an Authorization header is parsed, then only a well-formed Basic pair is accepted', () => {
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    expect(parseBasicAuthorization(`Basic ${b64('ops:pa:ss')}`)).toEqual({ user: 'ops', password: 'pa:ss' });
    expect(parseBasicAuthorization(`basic ${b64('ops:')}`)).toEqual({ user: 'ops', password: '' });
    expect(parseBasicAuthorization(`Basic ${b64('no-colon')}`)).toBeNull();
    expect(parseBasicAuthorization('Bearer abc')).toBeNull();
    expect(parseBasicAuthorization(undefined)).toBeNull();
  });

  it('when credentials are compared, then both the user and the password must match exactly', () => {
    const expected = { user: 'ops', password: 'secret' };
    expect(credentialsMatch(expected, 'ops', 'secret')).toBe(true);
    expect(credentialsMatch(expected, 'ops', 'secret ')).toBe(false);
    expect(credentialsMatch(expected, 'OPS', 'secret')).toBe(false);
    expect(credentialsMatch(expected, 'ops', '')).toBe(false);
  });

  it('when a host is classified, then only loopback addresses and localhost are loopback', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost', 'LOCALHOST'])
      expect(isLoopbackHost(host), host).toBe(true);
    for (const host of ['0.0.0.0', '::', '10.0.0.1', '128.0.0.1', 'localhost.evil.example', ''])
      expect(isLoopbackHost(host), host).toBe(false);
  });

  it('when a return path is given to the sign-in, then only paths of this dashboard are kept', () => {
    expect(safeNext('/?notice=x')).toBe('/?notice=x');
    expect(safeNext('/queues')).toBe('/queues');
    for (const next of [
      'https://evil.example',
      '//evil.example',
      '/\\evil',
      'javascript:alert(1)',
      '/login',
      42,
      undefined,
    ]) {
      expect(safeNext(next)).toBe('/');
    }
  });

  it('when cookies are read and written, then the session cookie is HttpOnly, SameSite=Strict, and Secure over HTTPS', () => {
    expect(parseCookies('a=1; rs=x%20y; a=2; bad')).toEqual({ a: '1', rs: 'x y' });
    expect(sessionCookie('rs', 'abc', { maxAgeSeconds: 60, secure: true })).toBe(
      'rs=abc; Path=/; HttpOnly; SameSite=Strict; Max-Age=60; Secure',
    );
  });

  it('when a stored run has odd counts, then they read as zeros', () => {
    const counts = countsOf({ accounts: { created: 2, failed: 'x' }, invoices: null });
    expect(counts.accounts).toEqual({ created: 2, updated: 0, unchanged: 0, failed: 0 });
    expect(counts.invoices).toEqual({ created: 0, updated: 0, unchanged: 0, failed: 0 });
  });
});

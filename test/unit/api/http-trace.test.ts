import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HttpTrace } from '../../../src/api/http-trace.js';

const SECRET = 'sbx_at_very_secret_value';

/** A server that answers a token grant with tokens, and anything else with JSON naming a token. */
const server: typeof fetch = (async (input: string | URL | Request) => {
  const url = String(input);
  if (url.endsWith('/api/oauth/token'))
    return new Response(
      JSON.stringify({ access_token: SECRET, refresh_token: `${SECRET}_rt`, expires_in: 60 }),
      {
        headers: { 'content-type': 'application/json' },
      },
    );
  return new Response(JSON.stringify({ id: 'acc_1', fullName: 'Alpha', accessToken: SECRET }), {
    status: 201,
    headers: { 'content-type': 'application/json', 'ratelimit-policy': '"p";q=300;w=60' },
  });
}) as typeof fetch;

async function traced(run: (f: typeof fetch) => Promise<void>) {
  const trace = new HttpTrace();
  await run(trace.fetch(server));
  const file = join(mkdtempSync(join(tmpdir(), 'rs-har-')), 'trace.har');
  await trace.save(file);
  const text = readFileSync(file, 'utf8');
  return { text, har: JSON.parse(text) };
}

describe('HttpTrace', () => {
  it('when requests carry a bearer token, form secrets and JSON tokens, then none of them is in the HAR file', async () => {
    const { text, har } = await traced(async (f) => {
      await f('https://api.test/api/oauth/token', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'refresh_token',
          refresh_token: `${SECRET}_old`,
          client_id: 'rs',
        }),
      });
      await f('https://api.test/api/public/v1/accounts?organizationId=o1', {
        method: 'POST',
        headers: { authorization: `Bearer ${SECRET}`, 'content-type': 'application/json' },
        body: JSON.stringify({ fullName: 'Alpha', source: { sourceId: 'C-1' } }),
      });
    });
    expect(text).not.toContain(SECRET);
    const [token, create] = har.log.entries;
    expect(har.log.version).toBe('1.2');
    expect(token.request.postData.text).toBe(
      'grant_type=refresh_token&refresh_token=%5Bredacted%5D&client_id=rs',
    );
    expect(JSON.parse(token.response.content.text)).toEqual({
      access_token: '[redacted]',
      refresh_token: '[redacted]',
      expires_in: 60,
    });
    expect(create.request.headers).toContainEqual({ name: 'authorization', value: 'Bearer [redacted]' });
    expect(create.request.queryString).toEqual([{ name: 'organizationId', value: 'o1' }]);
    expect(JSON.parse(create.request.postData.text)).toEqual({
      fullName: 'Alpha',
      source: { sourceId: 'C-1' },
    });
    expect(create.response).toMatchObject({ status: 201 });
    expect(create.response.headers).toContainEqual({ name: 'ratelimit-policy', value: '"p";q=300;w=60' });
  });

  it('when a multipart body carries a file, then the file is described by name, type and size, not kept', async () => {
    const { har } = await traced(async (f) => {
      const form = new FormData();
      form.set('number', 'F-1');
      form.set('file', new Blob([new Uint8Array(1234)], { type: 'application/pdf' }), 'F-1.pdf');
      await f('https://api.test/api/public/v1/invoices', { method: 'POST', body: form });
    });
    expect(har.log.entries[0].request.postData.params).toEqual([
      { name: 'number', value: 'F-1' },
      { name: 'file', fileName: 'F-1.pdf', contentType: 'application/pdf', value: '(1234 bytes)' },
    ]);
  });

  it('when the network fails, then the exchange is still in the trace, with the error', async () => {
    const trace = new HttpTrace();
    const failing = trace.fetch((async () => {
      throw new TypeError('fetch failed');
    }) as typeof fetch);
    await expect(failing('https://api.test/x')).rejects.toThrow('fetch failed');
    expect(trace.size).toBe(1);
  });
});

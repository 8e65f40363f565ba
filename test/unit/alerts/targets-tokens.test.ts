import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { deliverAlert } from '../../../src/alerts/delivery.js';
import { runFailedEvent } from '../../../src/alerts/events.js';
import { resolveAlertTargets, withoutUrl } from '../../../src/alerts/targets.js';
import { refreshTokenLifetimeOf, tellingRefusals } from '../../../src/alerts/token-watch.js';
import { LoginRequiredError } from '../../../src/api/errors.js';
import { ManualClock } from '../../../src/domain/clock.js';

const SECRET_URL = 'https://hooks.example.com/services/T0001/B0002/s3cr3tT0k3nXyZ?sig=abc123def';

describe('alert targets and the token watches', () => {
  it('when a target URL variable is unset or not a URL, then start fails naming the variable, never a value', () => {
    const targets = [
      { id: 'ops', type: 'slack' as const, urlEnv: 'OPS_URL' },
      { id: 'pager', type: 'webhook' as const, urlEnv: 'PAGER_URL', events: ['source.paused' as const] },
      { id: 'odd', type: 'webhook' as const, urlEnv: 'ODD_URL' },
    ];
    expect(() => resolveAlertTargets({ targets }, { PAGER_URL: 'not a url', ODD_URL: 'ftp://x/y' })).toThrow(
      /alerts\.targets\.ops: OPS_URL is not set[\s\S]*PAGER_URL does not hold a URL[\s\S]*ODD_URL must be an http\(s\) URL/,
    );
    const resolved = resolveAlertTargets(
      { targets },
      { OPS_URL: SECRET_URL, PAGER_URL: 'http://127.0.0.1:9/p', ODD_URL: 'http://x' },
    );
    expect(resolved.map((t) => [t.id, t.url, t.events && [...t.events]])).toEqual([
      ['ops', SECRET_URL, null],
      ['pager', 'http://127.0.0.1:9/p', ['source.paused']],
      ['odd', 'http://x', null],
    ]);
  });

  it('when a webhook URL holds user:pass@, then they travel as a Basic Authorization header and the URL goes without them', async () => {
    const received: Array<{ authorization: string | undefined; url: string | undefined }> = [];
    const server = createServer((request, response) => {
      received.push({ authorization: request.headers.authorization, url: request.url });
      request.resume();
      request.on('end', () => response.writeHead(204).end());
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const { port } = server.address() as AddressInfo;
      const [target] = resolveAlertTargets(
        { targets: [{ id: 'ops', type: 'webhook' as const, urlEnv: 'OPS_URL' }] },
        { OPS_URL: `http://alerts:p%40ss%3Aword@127.0.0.1:${port}/hook?x=1` },
      );
      expect(target!.url).toBe(`http://127.0.0.1:${port}/hook?x=1`);
      const clock = new ManualClock();
      await deliverAlert(target!, runFailedEvent({ sourceId: 'erp', error: new Error('down') }, clock), {
        timeoutMs: 5_000,
      });
      expect(received).toEqual([
        { authorization: `Basic ${Buffer.from('alerts:p@ss:word').toString('base64')}`, url: '/hook?x=1' },
      ]);
    } finally {
      server.close();
    }
  });

  it('when an error message quotes the URL or its path, then the secret parts are gone', () => {
    const message = `request to ${SECRET_URL} failed; path /services/T0001/B0002/s3cr3tT0k3nXyZ; token s3cr3tT0k3nXyZ`;
    const cleaned = withoutUrl(message, SECRET_URL);
    expect(cleaned).not.toContain('s3cr3tT0k3nXyZ');
    expect(cleaned).not.toContain('abc123def');
    expect(cleaned).toContain('request to [redacted] failed');
  });

  it('when a token answer states the refresh token lifetime, then it is read from either known field', () => {
    expect(refreshTokenLifetimeOf({ access_token: 'a', refresh_token_expires_in: 3600 })).toBe(3600);
    expect(refreshTokenLifetimeOf({ refresh_expires_in: '7200' })).toBe(7200);
    expect(refreshTokenLifetimeOf({ refresh_expires_in: 0 })).toBeNull();
    expect(refreshTokenLifetimeOf({ expires_in: 3600 })).toBeNull();
    expect(refreshTokenLifetimeOf('nope')).toBeNull();
  });

  it('when the credentials are refused again and again, then token.refused is told once until a refresh works', async () => {
    const told: string[] = [];
    let refuse = true;
    const provider = {
      getAccessToken: async () => 'at',
      invalidate: async () => {
        if (refuse) throw new LoginRequiredError('The stored refresh token was refused');
        return 'fresh';
      },
      budgetKey: (t: string) => `k:${t}`,
    };
    const watched = tellingRefusals(provider, { notify: (e) => told.push(e.type) }, new ManualClock());
    await expect(watched.invalidate('at')).rejects.toThrow(/refused/);
    await expect(watched.invalidate('at')).rejects.toThrow(/refused/);
    expect(told).toEqual(['token.refused']);
    refuse = false;
    expect(await watched.invalidate('at')).toBe('fresh');
    refuse = true;
    await expect(watched.invalidate('fresh')).rejects.toThrow(LoginRequiredError);
    expect(told).toEqual(['token.refused', 'token.refused']);
    expect(watched.budgetKey('x')).toBe('k:x');
  });
});

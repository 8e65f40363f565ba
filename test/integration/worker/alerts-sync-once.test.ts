import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSyncRuntime } from '../../../src/app/runtime.js';
import { loadConfig } from '../../../src/config/load.js';
import { createLogger } from '../../../src/logging/logger.js';
import { ALL_SCOPES } from '../../../src/sandbox/oauth/scopes.js';
import { runCli } from '../../support/cli.js';
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../../support/postgres.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';
import { type AlertReceiver, startAlertReceiver } from './alerts-receiver.js';

/**
 * Alerts without the worker: `sync --once` (the built CLI: `npm run build` first) and the runtime
 * it opens deliver from the process, with no Redis, a few retries, bounded by the exit.
 */
describe('alerts of sync --once (no Redis)', () => {
  const schema = uniqueSchema('alerts_once');
  const secret = `s${randomBytes(12).toString('hex')}`;
  const silent = createLogger({ level: 'silent' });
  let dir: string;
  let receiver: AlertReceiver;
  let sandbox: TestSandbox;
  /** A token endpoint in front of the sandbox's that says when the refresh token expires (2.5 days). */
  let tokenProxy: Server;
  let tokenProxyUrl: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rs-alerts-once-'));
    receiver = await startAlertReceiver();
    sandbox = await startTestSandbox();
    tokenProxy = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const upstream = await fetch(`${sandbox.baseUrl}/api/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': String(req.headers['content-type']) },
        body: Buffer.concat(chunks),
      });
      const body = (await upstream.json()) as Record<string, unknown>;
      if (upstream.ok) body.refresh_token_expires_in = 216_000;
      res.writeHead(upstream.status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
    tokenProxy.listen(0, '127.0.0.1');
    await once(tokenProxy, 'listening');
    tokenProxyUrl = `http://127.0.0.1:${(tokenProxy.address() as AddressInfo).port}/token`;
  });

  afterAll(async () => {
    tokenProxy?.closeAllConnections();
    tokenProxy?.close();
    await sandbox?.close();
    await receiver?.close();
    await dropSchema(schema);
    rmSync(dir, { recursive: true, force: true });
  });

  /** A configuration file: the given YAML, with the alert targets `ok` and `stuck` (hook URLs from env). */
  const configFile = (name: string, yaml: string) => {
    const file = join(dir, `${name}.yaml`);
    writeFileSync(
      file,
      `${yaml}
alerts:
  targets:
    - { id: ok, type: webhook, urlEnv: TEST_ALERT_OK_URL }
    - { id: stuck, type: webhook, urlEnv: TEST_ALERT_STUCK_URL, events: [run.failed] }
  timeoutSeconds: 30
`,
    );
    return file;
  };
  const env = (name: string) => ({
    RECEIVABLES_BASE_URL: sandbox.baseUrl,
    DATABASE_URL: TEST_DATABASE_URL,
    DATABASE_SCHEMA: schema,
    REDIS_URL: '',
    TEST_ALERT_OK_URL: receiver.url(`/ok/${name}/${secret}`),
    TEST_ALERT_STUCK_URL: receiver.url(`/stuck/${name}/${secret}`),
  });

  it('when a pass cannot run, then run.failed is delivered (a 500 retried), a target that never answers does not hold the exit, and the exit code stays 1', async () => {
    receiver.failNext('/ok/cli/', 1);
    receiver.hang('/stuck/cli/');
    const file = configFile(
      'cli',
      `sources:\n  - { id: broken, type: csv, dropDir: ${join(dir, 'missing')}, stableSeconds: 0 }`,
    );
    const result = await runCli(['--config', file, 'sync', '--once'], {
      env: {
        ...env('cli'),
        RECEIVABLES_ACCESS_TOKEN: sandbox.accessToken,
        RECEIVABLES_ORGANIZATION_ID: sandbox.organizationId,
        LOG_LEVEL: 'debug',
        LOG_FORMAT: 'json',
      },
    });
    const exitedAt = Date.now();
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('does not exist');
    const [delivered] = receiver.delivered('/ok/cli/');
    expect(receiver.requests.filter((r) => r.path.startsWith('/ok/cli/')).map((r) => r.answered)).toEqual([
      500, 200,
    ]);
    expect(delivered).toMatchObject({
      type: 'run.failed',
      sourceId: 'broken',
      details: { errorCode: 'CSV_DROP_DIR_MISSING' },
    });
    // The stuck target was called, never answered, and the process exited a few seconds later
    // (30 s per attempt otherwise), saying which target it gave up on, by id only.
    const stuck = receiver.requests.filter((r) => r.path.startsWith('/stuck/cli/'));
    expect(stuck).toHaveLength(1);
    expect(exitedAt - stuck[0]!.at).toBeLessThan(6000);
    expect(result.stderr).toMatch(/"event":"alert.undelivered"[^\n]*"target":"stuck"/);
    expect(`${result.stdout}${result.stderr}`).not.toContain(secret);
  });

  it('when the credentials are refused, then token.refused and run.failed (nothing could start) are each delivered once before the command fails', async () => {
    const loaded = loadConfig({
      file: configFile('refused', `sources:\n  - { id: erp, type: csv, dropDir: ${dir}, stableSeconds: 0 }`),
      env: { ...env('refused'), RECEIVABLES_ACCESS_TOKEN: 'not-a-valid-token' },
    });
    await expect(openSyncRuntime(loaded, silent)).rejects.toMatchObject({ code: 'LOGIN_REQUIRED' });
    const bodies = receiver.delivered('/ok/refused/');
    expect(bodies.map((b) => b.type).sort()).toEqual(['run.failed', 'token.refused']);
    expect(bodies.find((b) => b.type === 'token.refused')).toMatchObject({
      sourceId: null,
      details: { errorCode: 'LOGIN_REQUIRED', error: expect.stringContaining('RECEIVABLES_ACCESS_TOKEN') },
    });
    expect(bodies.find((b) => b.type === 'run.failed').summary).toMatch(/^the sync could not start: /);
  });

  it('when the token endpoint says the refresh token expires within tokenExpiryDays, then token.expiring is delivered once', async () => {
    const { refreshToken } = sandbox.deps.tokens.issue({
      clientId: sandbox.clientId,
      userId: sandbox.seeded.user.id,
      scopes: [...ALL_SCOPES],
    });
    const file = join(dir, 'expiring.yaml');
    writeFileSync(
      file,
      `auth: { tokenEndpoint: ${tokenProxyUrl} }
state: { dataDir: ${join(dir, 'expiring-data')} }
sources:\n  - { id: erp, type: csv, dropDir: ${dir}, stableSeconds: 0 }
alerts:
  targets: [{ id: ok, type: webhook, urlEnv: TEST_ALERT_OK_URL }]
  tokenExpiryDays: 7
`,
    );
    const loaded = loadConfig({
      file,
      env: {
        ...env('expiring'),
        RECEIVABLES_REFRESH_TOKEN: refreshToken,
        RECEIVABLES_CLIENT_ID: sandbox.clientId,
        RECEIVABLES_TOKEN_KEY: randomBytes(32).toString('base64'),
      },
    });
    const runtime = await openSyncRuntime(loaded, silent);
    await runtime.close();
    const bodies = receiver.delivered('/ok/expiring/');
    expect(bodies).toHaveLength(1);
    expect(bodies[0]).toMatchObject({ type: 'token.expiring', sourceId: null, details: { daysLeft: 2 } });
    expect(bodies[0].summary).toMatch(
      /^the refresh token expires on \S+ \(in 2 days\): run `receivables-sync auth login`/,
    );
  });
});

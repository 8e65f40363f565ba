import { once } from 'node:events';
import { existsSync, readdirSync } from 'node:fs';
import { createConnection, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type FaultProxy,
  type FaultRule,
  NGINX_404_PAGE,
  type ProxiedRequest,
  type ProxyFault,
  startFaultProxy,
} from '../integration/api/fault-proxy.js';
import { runCli } from '../support/cli.js';
import { dropAccountsAndInvoices } from '../support/drop-data.js';
import { TEST_DATABASE_URL } from '../support/postgres.js';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.js';
import { lastJsonLine, openFailuresOf, runsOf, type SyncEnv, syncEnv } from '../support/sync-env.js';

/**
 * Answers the service (or a load balancer in front of it) should not give, against the built CLI,
 * a real sandbox behind a spoiling proxy over HTTP and the real Postgres: a 2xx without what the
 * contract gives after the write committed, an empty 201, a load balancer's HTML 502 and 404. Each
 * stops the pass like an outage (exit 1, one line with the status and a short excerpt), the files
 * go back to the drop folder, no row is recorded as a failure; the next pass through a healthy
 * proxy syncs every row exactly once (the pending Idempotency-Keys are replayed by the service).
 */

const ACCOUNTS = 10;
const INVOICES = 12;

function filesOf(env: SyncEnv) {
  const list = (sub: string) => {
    const dir = join(env.dropDir, sub);
    return existsSync(dir)
      ? readdirSync(dir, { recursive: true })
          .map(String)
          .filter((f) => f.endsWith('.csv'))
      : [];
  };
  return {
    waiting: readdirSync(env.dropDir)
      .filter((f) => f.endsWith('.csv'))
      .sort(),
    processing: list('.processing'),
    rejected: list('rejected'),
  };
}

/**
 * A rule spoiling the answers of `method path` from its `after`+1-th distinct Idempotency-Key on:
 * every attempt of a spoiled write gets `fault` (its retries too), the earlier writes pass.
 */
function fromTheNthWrite(method: string, path: string, after: number, fault: ProxyFault) {
  const spoiled = new Set<string>();
  const rule: FaultRule = (request, before) => {
    if (request.method !== method || !request.path.endsWith(path)) return undefined;
    const key = request.idempotencyKey ?? '';
    if (spoiled.has(key)) return fault;
    const earlier = new Set(
      before.filter((b) => b.method === method && b.path.endsWith(path)).map((b) => b.idempotencyKey),
    );
    if (earlier.has(key) || earlier.size < after) return undefined;
    spoiled.add(key);
    return fault;
  };
  return { rule, spoiled };
}

describe('malformed answers and load balancer pages during sync --once', () => {
  let sandbox: TestSandbox;
  let proxy: FaultProxy;
  let env: SyncEnv;
  beforeEach(async () => {
    sandbox = await startTestSandbox({ rateLimit: { quota: 100_000, windowSeconds: 60 } });
    proxy = await startFaultProxy(sandbox.baseUrl);
    env = syncEnv(sandbox, 'postgres');
    env.env.RECEIVABLES_BASE_URL = proxy.baseUrl;
    dropAccountsAndInvoices(env.dropDir, ACCOUNTS, INVOICES);
  });
  afterEach(async () => {
    await env.cleanup();
    await proxy.close();
    await sandbox.close();
  });

  const pass = () => runCli(['--config', env.configFile, 'sync', '--once', '--json'], { env: env.env });

  /**
   * What a stopped pass must leave: exit 1, one cause line, the file under way back in the drop
   * folder (`waiting`: a file finished before the fault is archived), no failure, a failed run.
   */
  async function expectStoppedLikeAnOutage(
    run: { code: number | null; stderr: string },
    said: RegExp,
    waiting = ['accounts.csv', 'invoices.csv'],
  ) {
    expect(run.code, run.stderr).toBe(1);
    const causes = run.stderr.split('\n').filter((l) => l.startsWith('receivables-sync:'));
    expect(causes, run.stderr).toHaveLength(1);
    expect(causes[0]).toMatch(said);
    expect(run.stderr).not.toMatch(/STATE_DB_VALUE_REFUSED|api_id|Cannot read properties|<html|<center>/);
    expect(filesOf(env)).toEqual({ waiting, processing: [], rejected: [] });
    expect(await openFailuresOf(env)).toBe(0);
    expect((await runsOf(env)).at(-1)).toMatchObject({ status: 'failed' });
  }

  /** The proxy healthy again: every row synced exactly once, the folder emptied. */
  async function expectHealedExactlyOnce(): Promise<ProxiedRequest[]> {
    proxy.setRule(undefined);
    const from = proxy.requests.length;
    const healed = await pass();
    expect(healed.code, healed.stderr).toBe(0);
    const summary = lastJsonLine(healed.stdout);
    expect(summary.accounts.failed).toBe(0);
    expect(summary.invoices.failed).toBe(0);
    const stats = await sandbox.admin('GET', '/stats');
    expect({ accounts: stats.accounts, invoices: stats.invoices }).toEqual({
      accounts: ACCOUNTS,
      invoices: INVOICES,
    });
    const accounts = await sandbox.call('GET', '/accounts', {
      query: { organizationId: sandbox.organizationId, first: 100 },
    });
    const accountIds = accounts.body.nodes.map((a: { source: { sourceId: string } }) => a.source.sourceId);
    expect(new Set(accountIds).size).toBe(ACCOUNTS);
    const invoices = await sandbox.call('GET', '/invoices', {
      query: { organizationId: sandbox.organizationId, first: 100 },
    });
    const invoiceIds = invoices.body.nodes.map((d: { sourceId: string }) => d.sourceId);
    expect(new Set(invoiceIds).size).toBe(INVOICES);
    expect(filesOf(env)).toEqual({ waiting: [], processing: [], rejected: [] });
    return proxy.requests.slice(from);
  }

  it('when creates that committed are answered {}, then the pass stops like an outage and the next one gets their stored answers under the same keys: each once', async () => {
    const { rule, spoiled } = fromTheNthWrite('POST', '/accounts', 3, {
      status: 201,
      body: '{}',
      contentType: 'application/json',
    });
    proxy.setRule(rule);
    const stopped = await pass();
    await expectStoppedLikeAnOutage(
      stopped,
      /RESPONSE_INVALID: POST \/api\/public\/v1\/accounts answered 201 \(application\/json\) without what the contract gives \(no "id"\): \{\}/,
    );
    expect((await runsOf(env)).at(-1)?.error).toMatch(/no "id"/);
    // Every attempt of a spoiled create carried its one key; the service ran it once, then replayed it.
    expect(spoiled.size).toBeGreaterThan(0);
    for (const key of spoiled) {
      const attempts = proxy.requests.filter((r) => r.idempotencyKey === key);
      expect(attempts.length).toBeGreaterThan(1);
      expect(attempts.filter((r) => r.replayed === false)).toHaveLength(1);
    }
    const healing = await expectHealedExactlyOnce();
    // The next pass sent the pending keys again and got the stored answers: nothing created twice.
    for (const key of spoiled)
      expect(healing.find((r) => r.idempotencyKey === key)).toMatchObject({ replayed: true, answered: 201 });
  });

  it('when a load balancer answers 404 in HTML, then it is not read as an organization the token does not see', async () => {
    proxy.setRule((request) =>
      request.method === 'POST' && request.path.endsWith('/accounts')
        ? { status: 404, body: NGINX_404_PAGE, contentType: 'text/html', forward: false }
        : undefined,
    );
    const stopped = await pass();
    expect(stopped.stderr).not.toMatch(/ORGANIZATION_NOT_VISIBLE|fix the source's organizationId/);
    await expectStoppedLikeAnOutage(
      stopped,
      /HTTP_404: POST \/api\/public\/v1\/accounts answered 404 \(text\/html\) and a body that is not the API's JSON error: 404 Not Found nginx\/1\.25\.3/,
    );
    await expectHealedExactlyOnce();
  });
});

describe('the state DB coming back as a pass starts', () => {
  it('when Postgres accepts connections only 2 s after sync --once started, then the pass waits for it and syncs everything', async () => {
    const sandbox = await startTestSandbox({ rateLimit: { quota: 100_000, windowSeconds: 60 } });
    const env = syncEnv(sandbox, 'postgres');
    let relay: Server | undefined;
    try {
      dropAccountsAndInvoices(env.dropDir, 3, 4);
      const port = await freePort();
      const target = new URL(TEST_DATABASE_URL);
      const url = new URL(TEST_DATABASE_URL);
      url.port = String(port);
      env.env.DATABASE_URL = url.toString();
      const run = runCli(['--config', env.configFile, 'sync', '--once', '--json'], { env: env.env });
      // Until then the port refuses connections (ECONNREFUSED), as a restarting Postgres does.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      relay = createServer((socket) => {
        const upstream = createConnection(Number(target.port || 5432), target.hostname);
        socket.pipe(upstream).pipe(socket);
        socket.on('error', () => upstream.destroy());
        upstream.on('error', () => socket.destroy());
      });
      relay.listen(port, '127.0.0.1');
      await once(relay, 'listening');
      const done = await run;
      expect(done.code, done.stderr).toBe(0);
      expect(lastJsonLine(done.stdout).accounts).toMatchObject({ created: 3, failed: 0 });
      expect((await sandbox.admin('GET', '/stats')).invoices).toBe(4);
    } finally {
      if (relay) {
        const closed = once(relay, 'close');
        relay.close();
        await closed;
      }
      await env.cleanup();
      await sandbox.close();
    }
  });
});

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

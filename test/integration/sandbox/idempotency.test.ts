import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/domain/clock.js';
import { IdempotencyStore } from '../../../src/sandbox/idempotency.js';
import { NO_FAULTS } from '../../../src/sandbox/options.js';
import { API, startTestSandbox, type TestSandbox } from '../../support/sandbox.js';

describe('idempotency keys', () => {
  const clock = new ManualClock('2026-03-02T09:00:00.000Z');
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startTestSandbox({ clock });
  });
  afterEach(() => sandbox.admin('PUT', '/faults', NO_FAULTS));
  afterAll(() => sandbox.close());

  const account = (fullName: string, extra: Record<string, unknown> = {}) => ({
    organizationId: sandbox.organizationId,
    fullName,
    currencyCode: 'EUR',
    billingAddress: { street: '1 rue de la Paix', city: 'Paris', postalCode: '75002', country: 'FR' },
    ...extra,
  });
  const create = (body: unknown, key?: string, token?: string) =>
    sandbox.call('POST', '/accounts', {
      body,
      token,
      headers: key === undefined ? {} : { 'Idempotency-Key': key },
    });
  const countNamed = async (fullName: string) => {
    const list = await sandbox.call('GET', '/accounts', {
      query: { organizationId: sandbox.organizationId },
    });
    return list.body.nodes.filter((a: any) => a.fullName === fullName).length;
  };

  it('when a write is repeated with the same key and body, then the stored response is replayed with Idempotent-Replay', async () => {
    const key = randomUUID();
    const first = await create(account('Replay Ltd'), key);
    const second = await create(account('Replay Ltd'), key);
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replay')).toBeNull();
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replay')).toBe('true');
    expect(second.body).toEqual(first.body);
    expect(await countNamed('Replay Ltd')).toBe(1);
  });

  it('when the JSON keys come in another order, then it is the same request', async () => {
    const key = randomUUID();
    const body = account('Order Ltd');
    await create(body, key);
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    const again = await create(reordered, key);
    expect(again.headers.get('idempotent-replay')).toBe('true');
    expect(await countNamed('Order Ltd')).toBe(1);
  });

  it('when a write has no key, then it executes every time', async () => {
    await create(account('NoKey Ltd'));
    await create(account('NoKey Ltd'));
    expect(await countNamed('NoKey Ltd')).toBe(2);
  });

  it('when the key is reused with a different body, then 422', async () => {
    const key = randomUUID();
    await create(account('First Body'), key);
    const r = await create(account('Second Body'), key);
    expect(r.status).toBe(422);
    expect(await countNamed('Second Body')).toBe(0);
  });

  it('when the key is empty or longer than 255 characters, then 400 and nothing runs', async () => {
    expect((await create(account('Empty Key'), '')).status).toBe(400);
    expect((await create(account('Long Key'), 'k'.repeat(256))).status).toBe(400);
    expect((await create(account('Max Key'), 'k'.repeat(255))).status).toBe(201);
    expect(await countNamed('Empty Key')).toBe(0);
    expect(await countNamed('Long Key')).toBe(0);
  });

  it('when a request with the key is still running, then a second one gets 409 with Retry-After', async () => {
    // The injected latency is the slow execution under test: the key stays `running` that long.
    await sandbox.admin('PUT', '/faults', { latencyMs: 400 });
    const key = randomUUID();
    const scope = IdempotencyStore.scope(sandbox.clientId, 'POST', `${API}/accounts`, key);
    const slow = create(account('Slow Ltd'), key);
    await expect.poll(() => sandbox.deps.idempotency.stateOf(scope)).toBe('running');
    const concurrent = await create(account('Slow Ltd'), key);
    expect(concurrent.status).toBe(409);
    expect(Number(concurrent.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await slow).status).toBe(201);
    expect(sandbox.deps.idempotency.stateOf(scope)).toBe('stored');
    expect(await countNamed('Slow Ltd')).toBe(1);
  });

  it('when the write fails with a 4xx, then the key is released and the same key runs the write again', async () => {
    const key = randomUUID();
    const body = account('Released Ltd', { source: { connectionId: 'erp', sourceId: 'DUP-1' } });
    const holder = await create(account('Holder', { source: { connectionId: 'erp', sourceId: 'DUP-1' } }));
    expect(holder.status).toBe(201);
    expect((await create(body, key)).status).toBe(400);
    expect((await sandbox.call('DELETE', `/accounts/${holder.body.id}`)).status).toBe(204);
    const retried = await create(body, key);
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotent-replay')).toBeNull();
  });

  it('when the idempotency store is unreachable, then 503 and nothing was executed; without a key the write runs', async () => {
    await sandbox.admin('PUT', '/faults', { idempotencyStoreDown: true });
    const r = await create(account('Store Down'), randomUUID());
    expect(r.status).toBe(503);
    expect(await countNamed('Store Down')).toBe(0);
    expect((await create(account('Store Down'))).status).toBe(201);
  });

  it('when another OAuth client uses the same key, then it does not see the first client stored response', async () => {
    const other = (await sandbox.admin('POST', '/tokens', { clientId: 'another-client' })).accessToken;
    const key = randomUUID();
    await create(account('Client A'), key);
    const r = await create(account('Client A'), key, other);
    expect(r.status).toBe(201);
    expect(r.headers.get('idempotent-replay')).toBeNull();
    expect(await countNamed('Client A')).toBe(2);
  });

  it('when the same key is used on another path or method, then it is a different scope', async () => {
    const key = randomUUID();
    const created = await create(account('Scope Ltd'), key);
    const put = await sandbox.call('PUT', `/accounts/${created.body.id}`, {
      body: { fullName: 'Scope Ltd renamed' },
      headers: { 'Idempotency-Key': key },
    });
    expect(put.status).toBe(200);
    expect(put.headers.get('idempotent-replay')).toBeNull();
  });

  it('when GET carries a key, then the header is ignored', async () => {
    const key = randomUUID();
    const a = await sandbox.call('GET', '/organizations', { headers: { 'Idempotency-Key': key } });
    const b = await sandbox.call('GET', '/organizations', { headers: { 'Idempotency-Key': key } });
    expect(a.status).toBe(200);
    expect(b.headers.get('idempotent-replay')).toBeNull();
  });

  it('when 24 hours have passed, then the stored key is gone and the write runs again', async () => {
    const key = randomUUID();
    await create(account('Retention Ltd'), key);
    clock.advance(24 * 3600 * 1000 - 1000);
    expect((await create(account('Retention Ltd'), key)).headers.get('idempotent-replay')).toBe('true');
    clock.advance(2000);
    expect((await create(account('Retention Ltd'), key)).headers.get('idempotent-replay')).toBeNull();
    expect(await countNamed('Retention Ltd')).toBe(2);
  });

  it('when the connection drops after the write committed, then a retry with the same key replays it: one record', async () => {
    await sandbox.admin('PUT', '/faults', { dropAfterCommitRate: 1 });
    const key = randomUUID();
    await expect(create(account('Dropped Ltd'), key)).rejects.toThrow();
    await sandbox.admin('PUT', '/faults', { dropAfterCommitRate: 0 });
    const retry = await create(account('Dropped Ltd'), key);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replay')).toBe('true');
    expect(await countNamed('Dropped Ltd')).toBe(1);
  });

  it('when DELETE is repeated without a key, then it is safe: the second answers 404 and nothing else changes', async () => {
    const created = await create(account('Delete Twice'));
    expect((await sandbox.call('DELETE', `/accounts/${created.body.id}`)).status).toBe(204);
    expect((await sandbox.call('DELETE', `/accounts/${created.body.id}`)).status).toBe(404);
  });
});

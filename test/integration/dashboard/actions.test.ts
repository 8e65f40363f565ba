import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RecordMapRepository } from '../../../src/state/record-map.js';
import {
  basic,
  csrfTokenOf,
  formPost,
  ORIGIN,
  openTestState,
  RecordingQueues,
  testApp,
  truncateState,
} from './dashboard-support.js';

type State = Awaited<ReturnType<typeof openTestState>>;
const auth = { authorization: basic() };

describe('dashboard actions', () => {
  let state: State;
  let queues: RecordingQueues;
  let app: ReturnType<typeof testApp>;
  let token: string;

  beforeAll(async () => {
    state = await openTestState('dash_actions');
  });
  afterAll(async () => {
    await state.close();
  });
  beforeEach(async () => {
    await truncateState(state);
    queues = new RecordingQueues();
    app = testApp(state, { queues });
    token = await csrfTokenOf(app, auth);
  });

  const act = (path: string, form: Record<string, string> = {}, headers: Record<string, string> = {}) =>
    formPost(app, path, { _csrf: token, ...form }, { ...auth, ...headers });

  it('when Re-sync is pressed, then a manual pass of the source is queued and the page says so', async () => {
    const res = await act('/actions/sources/erp-csv/resync');
    expect(res.statusCode).toBe(303);
    expect(queues.calls).toEqual([
      { type: 'source-sync', sourceId: 'erp-csv', trigger: 'manual', full: false },
    ]);
    const location = String(res.headers.location);
    expect(location).toMatch(/^\/\?notice=resync-queued&source=erp-csv&job=/);
    const page = await app.inject({ url: location, headers: { ...auth, accept: 'text/html' } });
    expect(page.body).toContain('Re-sync of <b>erp-csv</b> queued');
  });

  it('when the source already has a pass queued, then nothing is added and the page says so', async () => {
    await act('/actions/sources/erp-csv/resync');
    const again = await act('/actions/sources/erp-csv/resync');
    expect(String(again.headers.location)).toContain('notice=already-queued');
  });

  it('when Full re-sync is pressed, then a full pass is queued', async () => {
    await act('/actions/sources/billing-db/full-resync');
    expect(queues.calls).toEqual([
      { type: 'source-sync', sourceId: 'billing-db', trigger: 'manual', full: true },
    ]);
  });

  it('when Retry failures is pressed, then a retry job is queued', async () => {
    await act('/actions/sources/erp-csv/retry-failures');
    expect(queues.calls).toEqual([{ type: 'failure-retry', sourceId: 'erp-csv' }]);
  });

  it('when one synced record is re-synced by its source id, then its job is queued; an unknown one is refused', async () => {
    await new RecordMapRepository(state.db).save(
      'erp-csv',
      'invoice',
      {
        sourceKey: 'INV-7',
        apiId: 'api-7',
        contentHash: 'h',
        syncedState: {},
        record: { kind: 'invoice', sourceId: 'INV-7' },
      },
      null,
    );
    const ok = await act('/actions/records/resync', {
      sourceId: 'erp-csv',
      kind: 'invoice',
      sourceKey: ' INV-7 ',
    });
    expect(String(ok.headers.location)).toContain('notice=record-queued');
    expect(queues.calls).toEqual([
      { type: 'record-resync', sourceId: 'erp-csv', kind: 'invoice', sourceKey: 'INV-7' },
    ]);

    const unknown = await act('/actions/records/resync', {
      sourceId: 'erp-csv',
      kind: 'invoice',
      sourceKey: 'INV-404',
    });
    const location = String(unknown.headers.location);
    expect(location).toContain('notice=DASHBOARD_RECORD_UNKNOWN');
    const page = await app.inject({ url: location, headers: { ...auth, accept: 'text/html' } });
    expect(page.body).toContain('has no synced invoice <code>INV-404</code>');
    const invalid = await act('/actions/records/resync', {
      sourceId: 'erp-csv',
      kind: 'order',
      sourceKey: 'X',
    });
    expect(String(invalid.headers.location)).toContain('notice=DASHBOARD_INPUT_INVALID');
    expect(queues.calls).toHaveLength(1);
  });

  it('when a source is paused, then sources.paused is set, its actions are refused, and resuming allows them again', async () => {
    await act('/actions/sources/erp-csv/pause');
    const row = await state.db
      .selectFrom('sources')
      .selectAll()
      .where('id', '=', 'erp-csv')
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ paused: true, type: 'csv' });
    const status = (await app.inject({ url: '/api/status', headers: auth })).json();
    expect(status.sources.find((s: any) => s.id === 'erp-csv').paused).toBe(true);
    const page = await app.inject({ url: '/', headers: { ...auth, accept: 'text/html' } });
    expect(page.body).toMatch(
      /data-source="erp-csv"[\s\S]*?data-status="paused"[\s\S]*?value="resync" class="primary" disabled/,
    );

    const refused = await act('/actions/sources/erp-csv/resync');
    expect(String(refused.headers.location)).toContain('notice=DASHBOARD_SOURCE_PAUSED&source=erp-csv');
    const script = await app.inject({
      method: 'POST',
      url: '/actions/sources/erp-csv/resync',
      headers: { ...auth, accept: 'application/json', 'x-csrf-token': token },
    });
    expect(script.statusCode).toBe(409);
    expect(script.json()).toMatchObject({ code: 'DASHBOARD_SOURCE_PAUSED' });
    expect(queues.calls).toEqual([]);

    await act('/actions/sources/erp-csv/resume');
    expect(
      (
        await state.db
          .selectFrom('sources')
          .select('paused')
          .where('id', '=', 'erp-csv')
          .executeTakeFirstOrThrow()
      ).paused,
    ).toBe(false);
    await act('/actions/sources/erp-csv/resync');
    expect(queues.calls).toHaveLength(1);
  });

  it('when an action comes without its CSRF token, or with a wrong one, then it is refused with 403 and nothing happens', async () => {
    for (const form of [{}, { _csrf: 'forged' }, { _csrf: `${token}x` }] as Array<Record<string, string>>) {
      const res = await formPost(app, '/actions/sources/erp-csv/resync', form, auth);
      expect(res.statusCode).toBe(403);
      expect(res.body).toContain('reload the page');
    }
    // A token of another principal (a session) is not valid for HTTP Basic, and the reverse.
    const signIn = await formPost(app, '/login', {
      user: 'ops',
      password: 'correct horse battery staple',
      next: '/',
    });
    const cookie = String(signIn.headers['set-cookie']).split(';')[0]!;
    const sessionToken = await csrfTokenOf(app, { cookie });
    expect(sessionToken).not.toBe(token);
    expect(
      (await formPost(app, '/actions/sources/erp-csv/resync', { _csrf: sessionToken }, auth)).statusCode,
    ).toBe(403);
    expect(
      (await formPost(app, '/actions/sources/erp-csv/resync', { _csrf: sessionToken }, { cookie }))
        .statusCode,
    ).toBe(303);
    expect(queues.calls).toHaveLength(1);
  });

  it('when an action is posted from another origin, then it is refused with 403 even with a valid token', async () => {
    const cross = await act('/actions/sources/erp-csv/resync', {}, { origin: 'https://evil.example' });
    expect(cross.statusCode).toBe(403);
    const nullOrigin = await act('/actions/sources/erp-csv/resync', {}, { origin: 'null' });
    expect(nullOrigin.statusCode).toBe(403);
    const viaReferer = await formPost(
      app,
      '/actions/sources/erp-csv/resync',
      { _csrf: token },
      { ...auth, origin: '', referer: 'https://evil.example/page' },
    );
    expect(viaReferer.statusCode).toBe(403);
    expect(queues.calls).toEqual([]);
    expect((await act('/actions/sources/erp-csv/resync', {}, { origin: ORIGIN })).statusCode).toBe(303);
  });

  it('when an action is requested with GET, then nothing changes (404)', async () => {
    for (const url of ['/actions/sources/erp-csv/resync', '/actions/sources/erp-csv/pause', '/logout']) {
      expect((await app.inject({ url, headers: auth })).statusCode).toBe(404);
    }
    expect(queues.calls).toEqual([]);
  });

  it('when a script posts an action as JSON with the token of /api/status, then it gets the job id', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/actions/sources/erp-csv/full-resync',
      headers: { ...auth, accept: 'application/json', 'x-csrf-token': token },
    });
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({ result: 'full-resync-queued', source: 'erp-csv', job: expect.any(String) });
  });

  it('when the source or the action is unknown, then 404 and nothing is queued', async () => {
    const headers = { ...auth, accept: 'application/json', 'x-csrf-token': token };
    const source = await app.inject({ method: 'POST', url: '/actions/sources/nope/resync', headers });
    expect(source.statusCode).toBe(404);
    expect(source.json()).toMatchObject({ code: 'DASHBOARD_SOURCE_UNKNOWN' });
    const action = await app.inject({
      method: 'POST',
      url: '/actions/sources/erp-csv/delete-everything',
      headers,
    });
    expect(action.json()).toMatchObject({ code: 'DASHBOARD_ACTION_UNKNOWN' });
    expect(queues.calls).toEqual([]);
  });

  it('when the queue cannot take the job, then the action answers 503 and the page says nothing was queued', async () => {
    queues.failWith = new Error('connect ECONNREFUSED 127.0.0.1:6379');
    const res = await act('/actions/sources/erp-csv/resync');
    const location = String(res.headers.location);
    expect(location).toContain('notice=DASHBOARD_QUEUE_UNAVAILABLE');
    const page = await app.inject({ url: location, headers: { ...auth, accept: 'text/html' } });
    expect(page.body).toContain('nothing was queued');
  });

  it('when the dashboard has no queues, then it is read-only: the page says so and actions answer 503', async () => {
    const readOnly = testApp(state, { queues: undefined });
    const page = await readOnly.inject({ url: '/', headers: { ...auth, accept: 'text/html' } });
    expect(page.body).toContain('Read-only: no queues in this process');
    const readOnlyToken = await csrfTokenOf(readOnly, auth);
    const res = await readOnly.inject({
      method: 'POST',
      url: '/actions/sources/erp-csv/resync',
      headers: { ...auth, accept: 'application/json', 'x-csrf-token': readOnlyToken },
    });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ code: 'DASHBOARD_NO_QUEUES' });
  });

  it('when a crafted notice link is opened, then only the known texts are shown, with unknown sources dropped', async () => {
    const page = await app.inject({
      url: '/?notice=resync-queued&source=<script>alert(1)</script>&job=<b>x</b>',
      headers: { ...auth, accept: 'text/html' },
    });
    expect(page.body).not.toContain('<script>alert');
    expect(page.body).toContain('&lt;b&gt;x&lt;/b&gt;');
    const unknown = await app.inject({
      url: '/?notice=you-are-hacked',
      headers: { ...auth, accept: 'text/html' },
    });
    expect(unknown.body).not.toContain('you-are-hacked');
  });
});

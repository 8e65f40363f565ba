import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { dropUploadsOf } from '../../../src/app/drop-uploads.js';
import { openSyncRuntime, type SyncRuntime, syncServiceOf } from '../../../src/app/runtime.js';
import type { LoadedConfig } from '../../../src/config/load.js';
import { dashboardWorkerConfig } from '../../support/dashboard-env.js';
import { ACCOUNT_HEADER, accountRow, dropCsv, range } from '../../support/drop-data.js';
import { dropSchema, uniqueSchema } from '../../support/postgres.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';
import {
  basic,
  CREDENTIALS,
  csrfTokenOf,
  formPost,
  ORIGIN,
  RecordingQueues,
  SOURCES,
  silentLogger,
  testApp,
} from './dashboard-support.js';

const auth = { authorization: basic() };
type Part = { name: string; value: string } | { name: string; filename: string; content: string };

/** A multipart/form-data body as a browser's form sends it (fields in the order given). */
function multipart(parts: readonly Part[]): { payload: Buffer; contentType: string } {
  const boundary = `----rs-upload-${randomBytes(8).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    chunks.push(Buffer.from(`--${boundary}\r\n`));
    if ('filename' in part)
      chunks.push(
        Buffer.from(
          `Content-Disposition: form-data; name="${part.name}"; filename="${part.filename}"\r\nContent-Type: text/csv\r\n\r\n`,
        ),
        Buffer.from(part.content),
        Buffer.from('\r\n'),
      );
    else
      chunks.push(
        Buffer.from(`Content-Disposition: form-data; name="${part.name}"\r\n\r\n${part.value}\r\n`),
      );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

/**
 * The upload routes over the real parts: the staging folder under a real drop folder, the preview a
 * dry run of the sync against the sandbox API and a Postgres state DB (a first pass synced 3
 * accounts), the queue a recording one.
 */
describe('dashboard uploads', () => {
  const schema = uniqueSchema('dash_uploads');
  let dir: string;
  let dropDir: string;
  let sandbox: TestSandbox;
  let loaded: LoadedConfig;
  let runtime: SyncRuntime;
  let queues: RecordingQueues;
  let app: FastifyInstance;
  let token: string;

  const appWith = (maxBytes: number) =>
    testApp(runtime.database, {
      sources: [...loaded.config.sources, SOURCES[1]!],
      queues,
      uploads: dropUploadsOf(runtime, maxBytes),
    });

  const upload = (
    target: FastifyInstance,
    filename: string,
    content: string,
    options: { csrf?: string | null; sourceId?: string; accept?: string } = {},
  ) => {
    const csrf = options.csrf === undefined ? token : options.csrf;
    const body = multipart([
      ...(csrf === null ? [] : [{ name: '_csrf', value: csrf }]),
      { name: 'file', filename, content },
    ]);
    return target.inject({
      method: 'POST',
      url: `/sources/${options.sourceId ?? 'erp-csv'}/uploads`,
      headers: {
        ...auth,
        origin: ORIGIN,
        accept: options.accept ?? 'text/html',
        'content-type': body.contentType,
      },
      payload: body.payload,
    });
  };
  const staged = () => (existsSync(join(dropDir, '.uploads')) ? readdirSync(join(dropDir, '.uploads')) : []);
  const rootFiles = () =>
    readdirSync(dropDir, { withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => e.name)
      .sort();

  const accountsFile = `${[
    ACCOUNT_HEADER,
    accountRow(1), // as synced: unchanged
    accountRow(2, { name: 'Customer 2 GmbH' }), // renamed: updated
    accountRow(4), // new: created
    'C-5,,EUR,5 rue du Port,Nantes,44000,FR,,2026-01-06T10:00:00Z', // no name: refused
  ].join('\n')}\n`;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rs-uploads-'));
    dropDir = join(dir, 'drop');
    sandbox = await startTestSandbox();
    loaded = await dashboardWorkerConfig({
      dir,
      dropDir,
      schema,
      sandbox,
      user: CREDENTIALS.user,
      password: CREDENTIALS.password,
    });
    runtime = await openSyncRuntime(loaded, silentLogger);
    dropCsv(
      dropDir,
      'accounts.csv',
      ACCOUNT_HEADER,
      range(1, 3).map((i) => accountRow(i)),
    );
    await syncServiceOf(runtime, loaded.config.sources).syncSource('erp-csv', { trigger: 'once' });
  }, 60_000);

  afterAll(async () => {
    await runtime?.close();
    await sandbox?.close();
    await dropSchema(schema);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  beforeEach(async () => {
    queues = new RecordingQueues();
    app = appWith(1024 * 1024);
    token = await csrfTokenOf(app, auth);
  });

  it('when a file is uploaded, then its preview shows its rows, the row that would fail and why, and the plan; Sync now moves it into the drop folder and queues a pass', async () => {
    const res = await upload(app, 'accounts-2.csv', accountsFile);
    expect(res.statusCode).toBe(303);
    const location = String(res.headers.location);
    const id = /^\/sources\/erp-csv\/uploads\/([0-9a-f]{16})$/.exec(location)?.[1];
    expect(id).toBeDefined();
    expect(readFileSync(join(dropDir, '.uploads', id!, 'accounts-2.csv'), 'utf8')).toBe(accountsFile);
    expect(rootFiles()).toEqual([]);

    const page = await app.inject({ url: location, headers: { ...auth, accept: 'text/html' } });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('account C-4: &quot;Customer 4&quot;, EUR, Nantes, FR');
    expect(page.body).toMatch(/<tr data-failure-line="5" data-key="C-5">.*fullName/);
    expect(page.body).toContain('>Sync now</button>');
    expect(page.body).toContain('>Discard</button>');

    const preview = (
      await app.inject({ url: location, headers: { ...auth, accept: 'application/json' } })
    ).json();
    expect(preview.counts.accounts).toEqual({ created: 1, updated: 1, unchanged: 1, failed: 1 });
    expect(preview.failures).toEqual([expect.objectContaining({ line: 5, key: 'C-5' })]);
    expect(preview.plan.map((op: { key: string }) => op.key).sort()).toEqual(['C-2', 'C-4']);
    expect(await sandbox.admin('GET', '/stats')).toMatchObject({ accounts: 3 });

    const sync = await formPost(app, `${location}/sync`, { _csrf: token }, auth);
    expect(sync.statusCode).toBe(303);
    expect(String(sync.headers.location)).toMatch(
      /^\/sources\/erp-csv\?notice=upload-queued&source=erp-csv&job=.+&key=accounts-2\.csv$/,
    );
    expect(rootFiles()).toEqual(['accounts-2.csv']);
    expect(staged()).toEqual([]);
    expect(queues.calls).toEqual([
      { type: 'source-sync', sourceId: 'erp-csv', trigger: 'manual', full: false },
    ]);
    const sourcePage = await app.inject({
      url: String(sync.headers.location),
      headers: { ...auth, accept: 'text/html' },
    });
    expect(sourcePage.body).toContain('<code>accounts-2.csv</code> is in the drop folder of <b>erp-csv</b>');

    // The same name again while the first waits: the next free name, nothing replaced.
    const again = await upload(app, 'accounts-2.csv', `${ACCOUNT_HEADER}\n${accountRow(6)}\n`);
    await formPost(app, `${String(again.headers.location)}/sync`, { _csrf: token }, auth);
    expect(rootFiles()).toEqual(['accounts-2.csv', 'accounts-2~2.csv']);
    expect(readFileSync(join(dropDir, 'accounts-2.csv'), 'utf8')).toBe(accountsFile);
    rmSync(join(dropDir, 'accounts-2.csv'));
    rmSync(join(dropDir, 'accounts-2~2.csv'));
  });

  it('when Discard is pressed, then the upload is deleted and nothing is queued or dropped', async () => {
    const res = await upload(app, 'accounts-3.csv', accountsFile);
    const location = String(res.headers.location);
    const waiting = await app.inject({
      url: '/sources/erp-csv/upload',
      headers: { ...auth, accept: 'text/html' },
    });
    expect(waiting.body).toContain('<code>accounts-3.csv</code>');

    const discard = await formPost(app, `${location}/discard`, { _csrf: token }, auth);
    expect(discard.statusCode).toBe(303);
    expect(String(discard.headers.location)).toBe(
      '/sources/erp-csv/upload?notice=upload-discarded&source=erp-csv&key=accounts-3.csv',
    );
    expect(staged()).toEqual([]);
    expect(rootFiles()).toEqual([]);
    expect(queues.calls).toEqual([]);
    const gone = await app.inject({ url: location, headers: { ...auth, accept: 'application/json' } });
    expect(gone.statusCode).toBe(404);
    expect(gone.json().code).toBe('DASHBOARD_UPLOAD_UNKNOWN');
  });

  it('when a file is larger than the limit, then it is refused with 413 and nothing is kept', async () => {
    const small = appWith(2048);
    const big = `${ACCOUNT_HEADER}\n${range(1, 40)
      .map((i) => accountRow(i))
      .join('\n')}\n`;
    expect(big.length).toBeGreaterThan(2048);
    token = await csrfTokenOf(small, auth);
    const res = await upload(small, 'accounts-big.csv', big);
    expect(res.statusCode).toBe(413);
    expect(res.body).toContain('accounts-big.csv is larger than 2 KB, the most the dashboard takes');
    const json = await upload(small, 'accounts-big.csv', big, { accept: 'application/json' });
    expect(json.json().code).toBe('CSV_UPLOAD_TOO_LARGE');
    expect(staged()).toEqual([]);
  });

  it('when the CSRF token is missing or wrong, then the upload and the actions are refused (403) and nothing is written', async () => {
    for (const csrf of [null, 'forged']) {
      const res = await upload(app, 'accounts-4.csv', accountsFile, { csrf, accept: 'application/json' });
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe('DASHBOARD_CSRF_REFUSED');
    }
    expect(staged()).toEqual([]);

    const location = String((await upload(app, 'accounts-4.csv', accountsFile)).headers.location);
    const sync = await formPost(app, `${location}/sync`, { _csrf: 'forged' }, auth);
    expect(sync.statusCode).toBe(403);
    const discard = await formPost(app, `${location}/discard`, {}, auth);
    expect(discard.statusCode).toBe(403);
    expect(staged()).toHaveLength(1);
    expect(rootFiles()).toEqual([]);
    expect(queues.calls).toEqual([]);
    await formPost(app, `${location}/discard`, { _csrf: token }, auth);
  });

  it('when the source is not a CSV source, then its upload page and uploads are refused', async () => {
    const page = await app.inject({
      url: '/sources/billing-db/upload',
      headers: { ...auth, accept: 'text/html' },
    });
    expect(page.statusCode).toBe(400);
    expect(page.body).toContain(
      'billing-db is a sql source: only CSV sources (a drop folder) take uploaded files',
    );
    const res = await upload(app, 'invoices.csv', 'x', {
      sourceId: 'billing-db',
      accept: 'application/json',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('DASHBOARD_UPLOAD_UNSUPPORTED');
    const unknown = await upload(app, 'invoices.csv', 'x', { sourceId: 'nope', accept: 'application/json' });
    expect(unknown.statusCode).toBe(404);
  });

  it('when the file name is hostile, then only its last part is used, and a name no pass takes is refused', async () => {
    for (const hostile of ['../../../outside/accounts-x.csv', '..\\..\\outside\\accounts-x.csv']) {
      const res = await upload(app, hostile, accountsFile, { accept: 'application/json' });
      expect(res.statusCode).toBe(201);
      const { upload: view } = res.json();
      expect(view.name).toBe('accounts-x.csv');
      expect(readdirSync(join(dropDir, '.uploads', view.id))).toEqual(['accounts-x.csv']);
      await formPost(app, `/sources/erp-csv/uploads/${view.id}/discard`, { _csrf: token }, auth);
    }
    expect(existsSync(join(dir, 'outside'))).toBe(false);

    for (const [name, reason] of [
      ['.accounts.csv', 'starts with a dot'],
      ['notes.txt', 'matches no kind of this source: name it like accounts*.csv, invoices*.csv'],
      ['accounts\u0007\u001b[2J.csv', null],
    ] as const) {
      const res = await upload(app, name, accountsFile, { accept: 'application/json' });
      if (reason === null) {
        // Control characters are taken out of the name.
        expect(res.json().upload.name).toBe('accounts[2J.csv');
        await formPost(
          app,
          `/sources/erp-csv/uploads/${res.json().upload.id}/discard`,
          { _csrf: token },
          auth,
        );
        continue;
      }
      expect(res.statusCode, name).toBe(400);
      expect(res.json()).toMatchObject({ code: 'CSV_UPLOAD_NAME_REFUSED' });
      expect(res.json().message).toContain(reason);
    }
    expect(staged()).toEqual([]);

    // `.uploads` swapped for a link to a folder elsewhere: refused, nothing written there.
    const elsewhere = join(dir, 'elsewhere');
    rmSync(join(dropDir, '.uploads'), { recursive: true, force: true });
    symlinkSync(mkdtempSync(`${elsewhere}-`), join(dropDir, '.uploads'));
    const res = await upload(app, 'accounts-l.csv', accountsFile, { accept: 'application/json' });
    expect(res.statusCode).toBe(409);
    expect(res.json().code).toBe('CSV_DROP_DIR_UNSAFE');
    rmSync(join(dropDir, '.uploads'));
    for (const entry of readdirSync(dir).filter((e) => e.startsWith('elsewhere-')))
      expect(readdirSync(join(dir, entry))).toEqual([]);
  });
});

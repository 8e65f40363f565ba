import type { Queue } from 'bullmq';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { dashboardProfileOf } from '../../../src/app/source-profiles.js';
import { type SourceConfig, sourceSchema } from '../../../src/config/schema.js';
import { buildDashboardApp } from '../../../src/dashboard/app.js';
import type { DashboardDeps } from '../../../src/dashboard/deps.js';
import { ManualClock } from '../../../src/domain/clock.js';
import type { SyncQueues } from '../../../src/jobs/types.js';
import { createLogger } from '../../../src/logging/logger.js';
import type { StateDatabase } from '../../../src/state/database.js';

export const silentLogger = createLogger({ level: 'silent' });

/** Parsed by the schema, so the defaults of each source type are filled in. */
export const SOURCES: SourceConfig[] = [
  { id: 'erp-csv', type: 'csv', dropDir: '/tmp/unused-drop', schedule: '*/5 * * * *', stableSeconds: 0 },
  {
    id: 'billing-db',
    type: 'sql',
    urlEnv: 'BILLING_DATABASE_URL',
    schedule: '*/10 * * * *',
    streams: { invoices: { query: 'select * from billing.invoices' } },
  },
].map((s) => sourceSchema.parse(s));

export const CREDENTIALS = { user: 'ops', password: 'correct horse battery staple' };
export const basic = (user = CREDENTIALS.user, password = CREDENTIALS.password) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** What `inject` sends as Host by default, hence the origin of a same-origin POST. */
export const ORIGIN = 'http://localhost:80';

type Enqueued =
  | { type: 'source-sync'; sourceId: string; trigger: string | undefined; full: boolean }
  | { type: 'record-resync'; sourceId: string; kind: string; sourceKey: string }
  | { type: 'failure-retry'; sourceId: string }
  | { type: 'source-reconcile'; sourceId: string; repair: boolean };

/** A `SyncQueues` that records what it is asked (no Redis). */
export class RecordingQueues implements SyncQueues {
  readonly calls: Enqueued[] = [];
  readonly queues: readonly Queue[] = [];
  /** Source syncs pending, to answer `deduplicated` like the real queue. */
  readonly pending = new Set<string>();
  failWith: Error | null = null;

  async enqueueSourceSync(
    sourceId: string,
    options: { trigger?: 'schedule' | 'manual' | 'file'; full?: boolean } = {},
  ) {
    if (this.failWith) throw this.failWith;
    this.calls.push({ type: 'source-sync', sourceId, trigger: options.trigger, full: options.full ?? false });
    const deduplicated = this.pending.has(sourceId);
    this.pending.add(sourceId);
    return { jobId: `source-sync.${sourceId}.${deduplicated ? 1 : this.calls.length}`, deduplicated };
  }

  async enqueueRecordResync(sourceId: string, kind: 'account' | 'invoice' | 'creditNote', sourceKey: string) {
    this.calls.push({ type: 'record-resync', sourceId, kind, sourceKey });
    return { jobId: `record-resync.${sourceId}.${this.calls.length}`, deduplicated: false };
  }

  async enqueueFailureRetry(sourceId: string) {
    this.calls.push({ type: 'failure-retry', sourceId });
    return { jobId: `failure-retry.${sourceId}.${this.calls.length}`, deduplicated: false };
  }

  async enqueueSourceReconcile(sourceId: string, options: { repair?: boolean }) {
    this.calls.push({ type: 'source-reconcile', sourceId, repair: options.repair ?? false });
    return { jobId: `source-reconcile.${sourceId}.${this.calls.length}`, deduplicated: false };
  }

  async close() {}
}

/** Kept here for the dashboard's tests, which import it from this file. */
export { openTestState } from '../../support/postgres.js';

/** Empties the tables between tests of one file. */
export async function truncateState(state: StateDatabase): Promise<void> {
  await sql`truncate sources, runs, cursors, record_map, pending_writes, failures, drop_files`.execute(
    state.db,
  );
}

export function testApp(state: StateDatabase, overrides: Partial<DashboardDeps> = {}): FastifyInstance {
  return buildDashboardApp({
    sources: SOURCES,
    // As the composition root describes them, so each type's settings, files and cursors show.
    describeSource: dashboardProfileOf,
    db: state.db,
    queues: new RecordingQueues(),
    credentials: CREDENTIALS,
    host: '127.0.0.1',
    clock: new ManualClock('2026-01-15T10:00:00Z'),
    logger: silentLogger,
    ...overrides,
  });
}

/** The CSRF token of the page (`/api/status` gives it to scripts). */
export async function csrfTokenOf(app: FastifyInstance, headers: Record<string, string>): Promise<string> {
  const res = await app.inject({ url: '/api/status', headers });
  if (res.statusCode !== 200) throw new Error(`/api/status answered ${res.statusCode}: ${res.body}`);
  return res.json().csrfToken;
}

/** A form POST as a browser sends it from the page. */
export function formPost(
  app: FastifyInstance,
  url: string,
  form: Record<string, string>,
  headers: Record<string, string> = {},
) {
  return app.inject({
    method: 'POST',
    url,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'text/html',
      origin: ORIGIN,
      ...headers,
    },
    payload: new URLSearchParams(form).toString(),
  });
}

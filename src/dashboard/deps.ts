import type { SourceConfig } from '../config/schema.js';
import type { Clock } from '../domain/clock.js';
import type { RecordKind } from '../domain/records.js';
import type { SyncQueues } from '../jobs/types.js';
import type { Logger } from '../logging/logger.js';
import type { SyncMetrics } from '../metrics/sync-metrics.js';
import type { StateDb } from '../state/database.js';
import type { DashboardConnection } from './connection-groups.js';
import type { DashboardCredentials } from './credentials.js';
import type { DropUploads } from './drop-uploads.js';
import type { DescribeSource } from './source-profile.js';
import type { TokenBudgetReader } from './token-budgets.js';

/**
 * A source's open failures of one kind as a CSV file in its drop format, to fix and drop back:
 * its name and its lines (built in `app/`, which knows the CSV contract).
 */
export type FailuresCsvExport = (
  source: SourceConfig,
  kind: RecordKind,
) => { fileName: string; lines: AsyncIterable<string> };

/**
 * A dependency `/readyz` checks besides the state DB (Redis, the API, ...): it resolves when the
 * dependency answers, rejects (the reason is logged) when it does not, and resolves `'pending'`
 * when it has not been tried yet (it waits for another one): not ready either way.
 */
export interface ReadinessCheck {
  name: string;
  // biome-ignore lint/suspicious/noConfusingVoidType: a check that passes returns nothing (`() => queries.ping()`).
  check(): Promise<void | 'pending'>;
}

/** What `buildDashboardApp` needs; the composition root (`worker`, `dashboard`) builds it. */
export interface DashboardDeps {
  /** The configured sources, in configuration order. */
  sources: readonly SourceConfig[];
  /**
   * What each source's type shows (its own settings, its drop files, its cursors when it has none),
   * from `sources/` (`dashboardProfileOf` in app/). Without it a page shows each source's common keys only.
   */
  describeSource?: DescribeSource | undefined;
  /** The state DB: runs, failures, record map, drop files, cursors, `sources.paused`. */
  db: StateDb;
  /** Where actions are queued; without it the page is read-only (and there is no bull-board). */
  queues?: SyncQueues | undefined;
  /** Required unless `host` is a loopback address. */
  credentials: DashboardCredentials | undefined;
  /** The address the app will listen on: without credentials it must be loopback. */
  host: string;
  /** Served on `/metrics`; default: a new `SyncMetrics` reading queue depths and last successes. */
  metrics?: SyncMetrics | undefined;
  /** Checked by `/readyz` after the state DB (a Redis ping is added when `queues` are given). */
  readiness?: readonly ReadinessCheck[];
  clock: Clock;
  logger: Logger;
  /** `n` random bytes (session ids, the CSRF secret); default: node:crypto. */
  randomBytes?: (n: number) => Buffer;
  /** How often the page refreshes its status (default 2000 ms; 0 disables). */
  refreshMs?: number;
  /**
   * `dashboard.queueAdmin`: let bull-board change the queues (pause, retry, clean, promote, ...),
   * with the dashboard's CSRF token. Default false: bull-board is read-only.
   */
  queueAdmin?: boolean;
  /**
   * `dashboard.trustProxy`: the reverse proxies whose `X-Forwarded-For`, `-Proto` and `-Host` are
   * believed (addresses, CIDRs, `loopback`...), or `true` for any peer. Default false: ignored.
   */
  trustProxy?: boolean | readonly string[] | undefined;
  /**
   * How a sign-in attempt is held for the back-off's delay (default: a timer). Tests pass one that
   * advances their `ManualClock`, so they need no sleep.
   */
  wait?: (ms: number) => Promise<void>;
  /** Lifetime of a sign-in (default 12 h). */
  sessionTtlMs?: number;
  /**
   * The "Test connection" button: the same checks as `receivables-sync doctor`. Without it the
   * page has no such button.
   */
  testConnection?: (() => Promise<readonly ConnectionCheck[]>) | undefined;
  /** The failures CSV downloads of a source's page; without it the page offers none. */
  failuresCsv?: FailuresCsvExport | undefined;
  /**
   * The configured API connections (`dashboardConnectionsOf(loaded)`): the sync page's connection
   * headings show their base URL. Default: the default connection, without URL.
   */
  connections?: readonly DashboardConnection[] | undefined;
  /**
   * Each connection's token budget as the workers publish it (`openTokenBudgets`); without it
   * (no Redis) the page says the budget is unknown.
   */
  tokenBudgets?: TokenBudgetReader | undefined;
  /**
   * Files uploaded to a CSV source's drop folder, previewed first (`dropUploadsOf` in app/, which
   * needs the sync's API for the dry run: the worker's dashboard). Without it the upload page says so.
   */
  uploads?: DropUploads | undefined;
}

/** One check of "Test connection" (what `doctor` prints). */
export interface ConnectionCheck {
  name: string;
  status: 'ok' | 'warn' | 'fail';
  detail: string;
}

import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { resolveAlertTargets } from '../alerts/targets.js';
import { createRateLimiter } from '../api/rate-limit/create-rate-limiter.js';
import type { LoadedConfig } from '../config/load.js';
import type { SourceConfig } from '../config/schema.js';
import { messageOf } from '../domain/errors.js';
import { ReconcileSchedules } from '../jobs/reconcile-schedules.js';
import { SourceSchedules } from '../jobs/schedules.js';
import { createLogger } from '../logging/logger.js';
import { openStateDatabase } from '../state/database.js';
import { connectionChecks } from './doctor-api.js';
import { sourceCheck } from './doctor-sources.js';

export type CheckStatus = 'ok' | 'warn' | 'fail';

/** One line of `doctor`: what was checked, how it went, and why (with the fix when it failed). */
export interface DoctorCheck {
  name: string;
  status: CheckStatus;
  detail: string;
}

export interface DoctorOptions {
  /** Only this source's checks (the others are skipped). */
  sourceId?: string | undefined;
  /**
   * The fetch of the API client's transport and of the auth module (discovery, the token endpoint):
   * `--trace-http` records doctor's requests through it. Default: the built-in fetch.
   */
  fetch?: typeof fetch;
}

export const ok = (name: string, detail: string): DoctorCheck => ({ name, status: 'ok', detail });
export const warn = (name: string, detail: string): DoctorCheck => ({ name, status: 'warn', detail });
export const fail = (name: string, detail: string): DoctorCheck => ({ name, status: 'fail', detail });

/**
 * `doctor`: checks a setup end to end before the first pass, each part on its own (one failing
 * does not hide the others), writing nothing to the service: the configuration, the state DB and
 * its migrations, Redis and its eviction policy, the API's `/status`, discovery, the token and
 * what it may read, the organization, the advertised rate-limit policy, the clock, the document
 * write of `api.compat` (a probe on a random id), then each source (drop folder writable, SQL
 * queries compiling, module loading).
 */
export async function runDoctor(loaded: LoadedConfig, options: DoctorOptions = {}): Promise<DoctorCheck[]> {
  const { config } = loaded;
  const checks: DoctorCheck[] = [];
  const sources = config.sources.filter((s) => !options.sourceId || s.id === options.sourceId);
  checks.push(configCheck(loaded, sources.length, options.sourceId));
  checks.push(alertsCheck(loaded));
  const schedules = schedulesCheck(sources);
  if (schedules) checks.push(schedules);
  checks.push(await stateCheck(loaded));
  const redis = await redisCheck(config.queue.redisUrl);
  checks.push(redis.check);
  // Doctor's API requests count against their token's budget as a sync's do: through Redis, shared
  // with the workers, when it answered; else in this process (the redis check says why).
  const limiter = createRateLimiter({ redis: redis.connection, logger: createLogger({ level: 'silent' }) });
  try {
    checks.push(...(await connectionChecks(loaded, sources, options, limiter)));
  } finally {
    await limiter.close();
    redis.connection?.disconnect();
  }
  for (const source of sources) checks.push(await sourceCheck(source, loaded));
  return checks;
}

/**
 * The cron expressions of the sources' `schedule` and `reconcile.schedule`, as the worker checks
 * them before it starts (it refuses to start on an invalid one); none when no source has one.
 */
function schedulesCheck(sources: readonly SourceConfig[]): DoctorCheck | null {
  const set = sources.filter((s) => s.schedule !== undefined || s.reconcile?.schedule !== undefined);
  if (set.length === 0) return null;
  const problems = [...SourceSchedules.problems(sources), ...ReconcileSchedules.problems(sources)];
  return problems.length > 0
    ? fail('schedules', `${problems.join('; ')}: the worker will not start until fixed`)
    : ok('schedules', `valid for ${set.map((s) => s.id).join(', ')}`);
}

function configCheck(loaded: LoadedConfig, sources: number, sourceId: string | undefined): DoctorCheck {
  const from = loaded.file
    ? `read ${loaded.file}`
    : 'no configuration file: built-in defaults and environment';
  if (sourceId && sources === 0) return fail('config', `${from}; no source "${sourceId}" in it`);
  if (loaded.config.sources.length === 0)
    return fail('config', `${from}; no source is configured: add a \`sources:\` entry (README, "Sources")`);
  return ok('config', `${from}; ${loaded.config.sources.length} source(s)`);
}

/** The alert targets' URLs are set (`sync` and `worker` refuse to start otherwise); none is called. */
function alertsCheck(loaded: LoadedConfig): DoctorCheck {
  const configured = loaded.config.alerts.targets;
  if (configured.length === 0)
    return ok('alerts', 'no alert target (alerts.targets): nobody is told of failures');
  try {
    const targets = resolveAlertTargets(loaded.config.alerts, loaded.env);
    return ok(
      'alerts',
      `${targets.map((t) => `${t.id} (${t.type})`).join(', ')}: URLs set (not called: doctor sends nothing)`,
    );
  } catch (error) {
    return fail('alerts', messageOf(error));
  }
}

async function stateCheck(loaded: LoadedConfig): Promise<DoctorCheck> {
  const { state } = loaded.config;
  const where = state.databaseUrl ? `Postgres (schema ${state.schema})` : `embedded, in ${state.dataDir}`;
  try {
    // Migrations are applied by every command that syncs: here only counted, never applied.
    const database = await openStateDatabase({ ...state, migrate: false });
    try {
      const applied = await sql<{ n: number }>`select count(*)::int as n from kysely_migration`
        .execute(database.db)
        .then((r) => r.rows[0]?.n ?? 0)
        .catch(() => 0); // no table yet: nothing applied
      return applied > 0
        ? ok('state DB', `${where}: reachable, ${applied} migration(s) applied`)
        : warn('state DB', `${where}: reachable, not migrated yet (the first sync, or \`migrate\`, does it)`);
    } finally {
      await database.close();
    }
  } catch (error) {
    return fail('state DB', `${where}: ${messageOf(error)}; check DATABASE_URL (or state.dataDir)`);
  }
}

/**
 * Redis and its eviction policy; the connection is kept when Redis answered (the shared rate
 * limiter's, for doctor's API requests): the caller disconnects it.
 */
async function redisCheck(
  url: string | null | undefined,
): Promise<{ check: DoctorCheck; connection?: Redis | undefined }> {
  if (!url)
    return {
      check: ok('redis', 'not configured: `sync --once` limits its own rate; `worker` needs REDIS_URL'),
    };
  const redis = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: 3_000,
    retryStrategy: () => null,
  });
  redis.on('error', () => {});
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    redis.disconnect();
    return {
      check: fail('redis', `${redactedUrl(url)}: unreachable (${messageOf(error)}); check REDIS_URL`),
    };
  }
  let policy: string | undefined;
  try {
    const answer = (await redis.config('GET', 'maxmemory-policy')) as string[];
    policy = answer[1];
  } catch {
    return {
      check: warn(
        'redis',
        `${redactedUrl(url)}: reachable; its maxmemory-policy cannot be read (CONFIG is off)`,
      ),
      connection: redis,
    };
  }
  return {
    check:
      policy === 'noeviction'
        ? ok('redis', `${redactedUrl(url)}: reachable, maxmemory-policy noeviction`)
        : warn(
            'redis',
            `${redactedUrl(url)}: maxmemory-policy is ${policy}: Redis may evict queued jobs and rate-limit state; set noeviction`,
          ),
    connection: redis,
  };
}

function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url;
  }
}

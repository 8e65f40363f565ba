import { z } from 'zod';
import { CSV_FORMAT_FIELDS } from './csv-format-schema.js';
import { CSV_SOURCE_FIELDS } from './csv-source-schema.js';
import { SINGER_SOURCE_FIELDS } from './singer-source-schema.js';
import { SQL_SOURCE_FIELDS } from './sql-source-schema.js';
import { trustProxySchema } from './trust-proxy.js';

const cron = z.string().min(1, 'a cron expression is required');

/**
 * `reconcile` of a source (docs/reconcile.md): when the worker checks the service against the
 * record map (`schedule`, off by default), whether those scheduled reconciliations also repair
 * (`repair`, default false: report only), and whether `reconcile --repair` may unlink the accounts
 * of this source's connection that no source row claims (`deleteOrphans`, default false).
 */
const reconcileSettings = z
  .strictObject({
    schedule: cron.optional(),
    repair: z.boolean().default(false),
    deleteOrphans: z.boolean().default(false),
  })
  .optional();
const id = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'letters, digits, ".", "_" and "-", at most 64');
const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name');

/**
 * Where a source syncs to (docs/connections.md): the API connection (`connection`, an id of
 * `connections:`; default `default`, the one of the `api:` and `auth:` keys), the organization
 * (`organizationId`; default the connection's, else the only one its token sees), and its share of
 * the token's rate budget when several sources wait on it (`weight`, default 1).
 */
const TARGET_FIELDS = {
  connection: id.optional(),
  organizationId: z.uuid().optional(),
  weight: z.number().positive().max(1000).optional(),
};

const csvSource = z.strictObject({
  id,
  type: z.literal('csv'),
  dropDir: z.string().min(1),
  schedule: cron.optional(),
  /** Seconds a file's size and mtime must stay unchanged before it is taken. */
  stableSeconds: z.number().int().min(0).default(5),
  /** Your header -> contract column. */
  mapping: z.record(z.string(), z.string()).default({}),
  /** An unknown header column rejects the file (default: a warning, and its values are ignored). */
  strictColumns: z.boolean().default(false),
  /** The connectionId of linked account sources; defaults to the source id. */
  connectionId: z.string().min(1).optional(),
  /** Per kind: `mode: incremental` (default) or `snapshot` (a file is the whole set; docs/snapshots.md). */
  ...CSV_SOURCE_FIELDS,
  /** How the files are written and how their rows read: files, format(s), columns, rows. */
  ...CSV_FORMAT_FIELDS,
  reconcile: reconcileSettings,
  ...TARGET_FIELDS,
});

const sqlSource = z.strictObject({
  id,
  type: z.literal('sql'),
  /** Name of the environment variable holding the connection URL (never the URL itself). */
  urlEnv: z.string().min(1),
  schedule: cron.optional(),
  connectionId: z.string().min(1).optional(),
  reconcile: reconcileSettings,
  ...TARGET_FIELDS,
  ...SQL_SOURCE_FIELDS,
});

const moduleSource = z.strictObject({
  id,
  type: z.literal('module'),
  module: z.string().min(1),
  schedule: cron.optional(),
  options: z.record(z.string(), z.unknown()).default({}),
  connectionId: z.string().min(1).optional(),
  reconcile: reconcileSettings,
  ...TARGET_FIELDS,
});

/** A Singer tap run by the source (`command`), or fed by `receivables-sync target` (no `command`). */
const singerSource = z.strictObject({
  id,
  type: z.literal('singer'),
  schedule: cron.optional(),
  connectionId: z.string().min(1).optional(),
  reconcile: reconcileSettings,
  ...TARGET_FIELDS,
  ...SINGER_SOURCE_FIELDS,
});

export const sourceSchema = z.discriminatedUnion('type', [csvSource, sqlSource, moduleSource, singerSource]);

const url = z.url({ protocol: /^https?$/ });

/** What an alert target can be told (`alerts.targets[].events`; docs/alerts.md). */
export const ALERT_EVENTS = [
  'run.failed',
  'run.new-failures',
  'source.paused',
  'token.refused',
  'token.expiring',
] as const;
export type AlertEventType = (typeof ALERT_EVENTS)[number];

const alertTarget = z.strictObject({
  id,
  /** `webhook`: a generic JSON body; `slack`: `{"text", "blocks"}` (Slack, Mattermost, Rocket.Chat...). */
  type: z.enum(['webhook', 'slack']),
  /** Name of the environment variable holding the URL: webhook URLs carry a secret, never in the file. */
  urlEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name'),
  /** Only these events (default: every one). */
  events: z.array(z.enum(ALERT_EVENTS)).min(1).optional(),
});

/** Alert targets and the automatic pause of a source that keeps failing (docs/alerts.md). */
const alertsSchema = z
  .strictObject({
    targets: z
      .array(alertTarget)
      .default([])
      .refine((targets) => new Set(targets.map((t) => t.id)).size === targets.length, 'duplicate target id'),
    /** `run.new-failures`: a run that records at least this many new failures. */
    newFailuresThreshold: z.number().int().min(1).default(10),
    /** Pause a source after this many consecutive failed runs (0: never). */
    pauseAfterFailedRuns: z.number().int().min(0).default(0),
    /** `token.expiring`: the refresh token expires within this many days (when the server tells). */
    tokenExpiryDays: z.number().positive().default(7),
    /**
     * `run.failed` with no source: the worker has not been ready (Redis, the state DB or the API not
     * answering) for this many minutes since its start; told again every `repeatMinutes` while it
     * lasts. 0: never.
     */
    notReadyMinutes: z.number().min(0).default(5),
    /** `run.failed` of one source and `token.refused` are sent at most once per this many minutes. */
    repeatMinutes: z.number().min(0).default(60),
    /** Delivery attempts of one alert to one target; retries back off exponentially. */
    attempts: z.number().int().min(1).max(25).default(8),
    /** The first retry delay (worker queue); each next one doubles. */
    backoffSeconds: z.number().positive().default(5),
    /** Per HTTP request to a target. */
    timeoutSeconds: z.number().positive().max(60).default(10),
  })
  .prefault({});
const fieldName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_.]{0,63}$/, 'a field name: letters, digits, "_" and "."');

/**
 * The server's choices where the spec says "not shown" and the client depends on them
 * (src/api/compat.ts; defaults: the contract's). See docs/compatibility.md.
 */
const compatSchema = z.strictObject({
  documentPatch: z
    .strictObject({
      method: z.enum(['PATCH', 'PUT', 'POST']).default('PATCH'),
      path: z
        .string()
        .regex(
          /^\/(?:[A-Za-z0-9._~-]+|\{kind\}|\{id\})(?:\/(?:[A-Za-z0-9._~-]+|\{kind\}|\{id\}))*$/,
          'a path under /api/public/v1 such as /{kind}/{id}: segments of letters, digits, ".", "_", "~", "-", or {kind} / {id}',
        )
        .refine((path) => path.includes('{id}'), 'must contain {id}, the document id')
        .default('/{kind}/{id}'),
      paidAmountField: fieldName.default('paidAmount'),
      dueDateField: fieldName.default('dueDate'),
    })
    .prefault({}),
  createPaid: z.boolean().default(false),
  createPaidField: fieldName.default('paidAmount'),
});

/**
 * One API connection of `connections:` (docs/connections.md): a service's `{base_url}` and the
 * credentials of one token, read from the environment variables it names (never from the file),
 * stored encrypted per connection once exchanged. What it leaves out comes from `api:` and `auth:`.
 * The id `default` is the connection of the `api:` and `auth:` keys themselves.
 */
const connectionSchema = z.strictObject({
  id: id.refine((value) => value !== 'default', '"default" is the connection of the api: and auth: keys'),
  baseUrl: url,
  /** The organization of its sources that name none (default: the only one its token sees). */
  organizationId: z.uuid().optional(),
  /** A ready bearer token (no refresh), like RECEIVABLES_ACCESS_TOKEN. */
  accessTokenEnv: envName.optional(),
  /** A refresh token exchanged on first use, like RECEIVABLES_REFRESH_TOKEN. */
  refreshTokenEnv: envName.optional(),
  /** The OAuth client id (default `auth.clientId`), like RECEIVABLES_CLIENT_ID. */
  clientIdEnv: envName.optional(),
  auth: z
    .strictObject({
      clientId: z.string().min(1).optional(),
      tokenEndpoint: z.url().optional(),
      authorizationEndpoint: z.url().optional(),
    })
    .optional(),
  timeoutSeconds: z.number().positive().optional(),
  retryAttempts: z.number().int().min(1).max(20).optional(),
  concurrency: z.number().int().min(1).max(64).optional(),
  compat: compatSchema.optional(),
});

export const configSchema = z.strictObject({
  api: z.strictObject({
    baseUrl: url.nullable().default(null),
    organizationId: z.uuid().nullable().default(null),
    timeoutSeconds: z.number().positive().default(30),
    /**
     * How many times a request is tried before the pass stops on it (the first try included): a
     * network error, a timeout, a 408, 409, 429 or 5xx is tried again with the same Idempotency-Key,
     * after 0.2, 0.4, 0.8 … s (jittered, at most 30 s; a Retry-After wins). 8: about 25 s of trying.
     */
    retryAttempts: z.number().int().min(1).max(20).default(8),
    concurrency: z.number().int().min(1).max(64).default(8),
    /** The server's choices where the spec says "not shown" (docs/compatibility.md). */
    compat: compatSchema.prefault({}),
  }),
  auth: z.strictObject({
    clientId: z.string().min(1).default('receivables-sync'),
    /**
     * The token endpoint, for servers whose discovery documents are missing or wrong. Default: the
     * refresh grant goes to the spec's `{base_url}/api/oauth/token`, `auth login` to what discovery finds.
     */
    tokenEndpoint: z.url().optional(),
    /** The authorization endpoint of `auth login`, with `tokenEndpoint`: then login needs no discovery. */
    authorizationEndpoint: z.url().optional(),
  }),
  state: z.strictObject({
    databaseUrl: z.string().nullable().default(null),
    /** Postgres schema holding the state tables (lets several deployments share one database). */
    schema: z
      .string()
      .regex(/^[a-z_][a-z0-9_]*$/, 'lower-case letters, digits and "_"')
      .default('public'),
    dataDir: z.string().min(1).default('./data'),
    /**
     * The embedded state DB (no databaseUrl) keeps this many MB free on its folder's disk: below it a
     * pass stops before the next batch (exit 1, "disk full"), nothing lost. 0 turns the check off.
     */
    minFreeMb: z.number().int().min(0).default(64),
  }),
  queue: z.strictObject({
    redisUrl: z.string().nullable().default(null),
    /**
     * Prefix of the worker's Redis keys (queues, source locks, alerts, the budgets told to the
     * dashboard): deployments can share one Redis. The rate limiter's budgets, the token
     * endpoint's and the refresh lock stay under `receivables-sync:` whatever it says: every
     * deployment using one token shares its budget (docs/rate-limiting.md).
     */
    prefix: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'letters, digits, ".", "_" and "-", at most 64')
      .default('receivables-sync'),
    /** Jobs one worker process runs at once (never two of the same source). */
    concurrency: z.number().int().min(1).max(32).default(8),
    /** A job whose worker stopped renewing its lock for this long is resumed by another worker. */
    lockSeconds: z.number().positive().default(30),
    /** How often each worker looks for the jobs of a crashed worker. */
    stalledCheckSeconds: z.number().positive().default(30),
    /** Attempts of a job that fails with a transient error; retries back off exponentially. */
    attempts: z.number().int().min(1).max(100).default(5),
    /** The first retry delay; each next one doubles. */
    backoffSeconds: z.number().positive().default(30),
    /** On SIGTERM, how long running jobs may take to finish before they are left to another worker. */
    shutdownSeconds: z.number().positive().default(25),
  }),
  dashboard: z.strictObject({
    host: z.string().min(1).default('127.0.0.1'),
    port: z.number().int().min(0).max(65535).default(3000),
    /**
     * Queue administration in bull-board (`/queues`): pause/resume, retry, clean, promote, remove,
     * add jobs. False: bull-board is read-only and refuses every write with 403. True: its writes
     * are allowed with the dashboard's CSRF token (bull-board's UI sends it by itself).
     */
    queueAdmin: z.boolean().default(false),
    /**
     * Behind a reverse proxy: which proxies to believe about the client's address, protocol and
     * host (`X-Forwarded-For`, `-Proto`, `-Host`); see `trust-proxy.ts` and docs/dashboard.md.
     */
    trustProxy: trustProxySchema,
    /**
     * The largest file the upload page of a CSV source takes, in MB (MiB): a larger one is refused
     * with 413 and deleted. Its preview reads it whole (a dry run), so keep it to what a user waits for.
     */
    uploadMaxMb: z.number().positive().max(1024).default(10),
  }),
  log: z.strictObject({
    /** Unset: `info`, but on a terminal (pretty lines) only warnings and errors. */
    level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).optional(),
    /**
     * How logs (stderr) look: `auto` (default) short readable lines when stderr is a terminal, JSON
     * lines otherwise; `json`, `pretty` always. The CLI's `--log-format` overrides it.
     */
    format: z.enum(['auto', 'json', 'pretty']).default('auto'),
    /**
     * The human output colours a few words on a terminal (errors red, warnings yellow, ok green),
     * not under `NO_COLOR`; false: never. The CLI's `--no-color` sets it to false.
     */
    color: z.boolean().default(true),
  }),
  /** More APIs, organizations and tokens in one deployment (docs/connections.md). */
  connections: z
    .array(connectionSchema)
    .default([])
    .refine((list) => new Set(list.map((c) => c.id)).size === list.length, 'duplicate connection id'),
  sources: z.array(sourceSchema).default([]),
  alerts: alertsSchema,
});

export type Config = z.infer<typeof configSchema>;
export type SourceConfig = z.infer<typeof sourceSchema>;
/** A drop folder source's settings (`type: csv`). */
export type CsvSourceSettings = Extract<SourceConfig, { type: 'csv' }>;

/**
 * The drop folder settings of a source that takes files (a CSV source), null for any other: what
 * takes an uploaded file asks here, as code outside `sources/` and `config/` never compares `type`.
 */
export const dropFolderSettingsOf = (source: SourceConfig): CsvSourceSettings | null =>
  source.type === 'csv' ? source : null;
export type AlertsConfig = z.infer<typeof alertsSchema>;
export type ConnectionEntry = z.infer<typeof connectionSchema>;
export type AlertTargetConfig = AlertsConfig['targets'][number];

/** Secrets and settings that come only from the environment, never from the file. */
export interface Secrets {
  accessToken: string | undefined;
  refreshToken: string | undefined;
  dashboardUser: string | undefined;
  dashboardPassword: string | undefined;
  /** Key for tokens at rest (AES-256-GCM). */
  tokenKey: string | undefined;
}

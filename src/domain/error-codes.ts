import type { ErrorKind } from './errors.js';

/** What a code means for the runtime (`kind`, `retryable`) and for the user reading it (`fix`). */
export interface ErrorCodeEntry {
  /** Whose problem it is (see `ErrorKind`). */
  readonly kind: ErrorKind;
  /** Whether trying the same thing again, unchanged, may succeed. */
  readonly retryable: boolean;
  /** One sentence for the user: what to do. Listed in docs/error-codes.md. */
  readonly fix: string;
}

/**
 * Every code receivables-sync gives its errors (and the dashboard its refusals), as Fastify lists
 * its `FST_ERR_*`: an `AppError` takes its code from here, and its kind and retryability with it,
 * so a code means one thing wherever it is thrown. The API's own codes
 * (`app-invoicing.invoice.duplicate-source-id`, `HTTP_<status>`) are not listed: their answer
 * decides (`ApiResponseError`).
 *
 * docs/error-codes.md shows this table to users; test/unit/domain/error-codes.test.ts keeps them
 * equal and checks that each code is used somewhere in src/.
 */
export const ERROR_CODES = {
  // The API client: transport, answers, list filters and pagination.
  NETWORK_ERROR: {
    kind: 'infrastructure',
    retryable: true,
    fix: 'Check that the API address (RECEIVABLES_BASE_URL or api.baseUrl) is right and reachable from this machine (`doctor` tells more); the request is retried and the next pass resumes.',
  },
  TIMEOUT: {
    kind: 'infrastructure',
    retryable: true,
    fix: 'Check the API status and the network (`doctor` tells more): the API did not answer in time; the request is retried with the same Idempotency-Key.',
  },
  RESPONSE_INVALID: {
    kind: 'infrastructure',
    retryable: true,
    fix: 'Check that RECEIVABLES_BASE_URL points at the API itself and not at a proxy page: the answer lacked what the contract gives; it is retried with the same Idempotency-Key.',
  },
  PAGINATION_LOOP: {
    kind: 'infrastructure',
    retryable: false,
    fix: 'Report it to the service with the path the message names: it returned a list cursor it had already given; the next pass lists again.',
  },
  FILTER_INVALID: {
    kind: 'data',
    retryable: false,
    fix: 'Shorten the value the message names in the source (a lookup filter must stay within the API limits); if no record holds it, report the message as a bug.',
  },
  IDEMPOTENCY_KEY_INVALID: {
    kind: 'infrastructure',
    retryable: false,
    fix: 'Report the message as a bug of receivables-sync: an Idempotency-Key outside 1 to 255 characters was about to be sent.',
  },
  LOGIN_REQUIRED: {
    kind: 'infrastructure',
    retryable: false,
    fix: 'Log in again with `receivables-sync auth login` (or `auth import`), or fix the token variable the message names.',
  },

  // Authentication: discovery, login, stored credentials, token refresh.
  AUTH_DISCOVERY_FAILED: {
    kind: 'infrastructure',
    retryable: false,
    fix: 'Check that RECEIVABLES_BASE_URL is the Receivables Public API and that it publishes its OAuth metadata, or set auth.tokenEndpoint and auth.authorizationEndpoint (docs/authentication.md).',
  },
  AUTH_LOGIN_FAILED: {
    kind: 'infrastructure',
    retryable: false,
    fix: 'Run `receivables-sync auth login` again and complete the sign-in in the browser in time (or use `--paste`).',
  },
  AUTH_CREDENTIALS_UNUSABLE: {
    kind: 'config',
    retryable: false,
    fix: 'Set RECEIVABLES_TOKEN_KEY to the key the credentials file was written with (or a new one, then log in again), and keep its folder writable with free space.',
  },
  AUTH_TOKEN_ENDPOINT_FAILED: {
    kind: 'infrastructure',
    retryable: true,
    fix: 'Check the authorization server (`doctor`): its token endpoint failed or refused the grant; the stored refresh token is kept for the next attempt.',
  },
  AUTH_REFRESH_LOCK_TIMEOUT: {
    kind: 'infrastructure',
    retryable: true,
    fix: 'Nothing to do unless it lasts: another process held the token refresh lock too long; then look for a stuck receivables-sync process sharing these credentials.',
  },
  AUTH_CLIENT_UNKNOWN: {
    kind: 'config',
    retryable: false,
    fix: 'Use the OAuth client id your service registered for receivables-sync: `--client-id` of `auth login` or `auth import`, or RECEIVABLES_CLIENT_ID (auth.clientId).',
  },

  // The rate limiter.
  RATE_LIMITER_CLOSED: {
    kind: 'infrastructure',
    retryable: false,
    fix: 'Nothing to do during a shutdown (a request came after the limiter closed); anywhere else, report it as a bug.',
  },
  FLOW_WEIGHT_INVALID: {
    kind: 'config',
    retryable: false,
    fix: "Give the source's `weight` a number above 0 (at most 1000).",
  },

  // The configuration.
  CONFIG_INVALID: {
    kind: 'config',
    retryable: false,
    fix: 'Fix each problem the message lists, in the file it names or in the environment variable that sets the key.',
  },
  NO_SOURCE: {
    kind: 'config',
    retryable: false,
    fix: 'Define a source under `sources:` in the configuration file (see the README), or try `receivables-sync demo`.',
  },
  CONNECTION_UNKNOWN: {
    kind: 'config',
    retryable: false,
    fix: "Make the source's `connection` an id defined under `connections:`, or leave it unset for the default one.",
  },
  TARGET_SOURCE_INVALID: {
    kind: 'config',
    retryable: false,
    fix: 'Name with `target --source` a `type: singer` source configured without `command` (or configure exactly one such source).',
  },

  // Opening a run: API targets, organizations, the worker's start.
  API_BASE_URL_MISSING: {
    kind: 'config',
    retryable: false,
    fix: "Set RECEIVABLES_BASE_URL (or api.baseUrl, or the connection's baseUrl under `connections:`).",
  },
  ORGANIZATION_NOT_VISIBLE: {
    kind: 'config',
    retryable: false,
    fix: "Fix the source's organizationId, or use a token of that organization (`doctor` lists the organizations the token sees).",
  },
  ORGANIZATION_UNKNOWN: {
    kind: 'config',
    retryable: false,
    fix: "Set the organization (RECEIVABLES_ORGANIZATION_ID, api.organizationId, the connection's or the source's organizationId) to one that `doctor` lists for the token.",
  },
  DOCUMENT_WRITE_ROUTE: {
    kind: 'config',
    retryable: false,
    fix: "Set api.compat.documentPatch to the route your service uses to change a document's paid amount and due date (docs/compatibility.md; `doctor` checks it).",
  },
  WORKER_REDIS_MISSING: {
    kind: 'config',
    retryable: false,
    fix: 'Set REDIS_URL (or queue.redisUrl): `worker` needs Redis, `sync --once` does not.',
  },
  SCHEDULE_INVALID: {
    kind: 'config',
    retryable: false,
    fix: 'Fix the cron expressions the message lists (the sources `schedule` and reconcile schedules).',
  },
  WORKER_NOT_READY: {
    kind: 'infrastructure',
    retryable: true,
    fix: 'Bring back what the message says the worker waits for (Redis, the state DB, the API): it retries by itself, and `/readyz` shows what is missing.',
  },
  WORKER_START_STOPPED: {
    kind: 'infrastructure',
    retryable: false,
    fix: 'Nothing to do: a shutdown stopped the worker while it started; start it again when wanted.',
  },
  SOURCE_UNKNOWN: {
    kind: 'config',
    retryable: false,
    fix: 'Name a source id of the configuration (`status` lists them).',
  },
  SOURCE_BUSY: {
    kind: 'infrastructure',
    retryable: true,
    fix: "Run the repair again once the worker's job of this source has ended (its dashboard page shows it).",
  },
  UPLOAD_SOURCE_NOT_CSV: {
    kind: 'data',
    retryable: false,
    fix: 'Upload files to a `type: csv` source only: the other sources read a database or a tap.',
  },

  // Redis and the worker's jobs.
  REDIS_UNAVAILABLE: {
    kind: 'infrastructure',
    retryable: true,
    fix: 'Check that Redis at REDIS_URL runs and answers; nothing was lost, the next pass resumes.',
  },
  SOURCE_LOCK_LOST: {
    kind: 'infrastructure',
    retryable: true,
    fix: 'Nothing to do unless it repeats (the job runs again); then make Redis keep its keys: persistence across restarts and the noeviction policy.',
  },
  SOURCE_PASS_SUPERSEDED: {
    kind: 'infrastructure',
    retryable: true,
    fix: 'Nothing to do: a later pass of the same source started, so this one stopped and put its file back.',
  },

  // Sync passes.
  SYNC_RECORD_FAILED: {
    kind: 'data',
    retryable: false,
    fix: 'Fix the record in the source as its failure says (`failures` lists them); a failure marked retryable is retried by itself.',
  },
  SYNC_PASS_CANCELLED: {
    kind: 'infrastructure',
    retryable: false,
    fix: 'Nothing to do: a user cancelled the pass; the next pass resumes where it stopped.',
  },

  // The state DB.
  STATE_DB_UNAVAILABLE: {
    kind: 'infrastructure',
    retryable: true,
    fix: 'Check that the state DB (DATABASE_URL, or the embedded one under state.dataDir) is up and reachable; nothing was lost, the next pass resumes.',
  },
  STATE_DB_VALUE_REFUSED: {
    kind: 'data',
    retryable: false,
    fix: 'Correct the value of this record that the state DB refused (too long, out of range) in the source; if it looks right, report the message as a bug.',
  },
  STATE_DB_MIGRATION_FAILED: {
    kind: 'infrastructure',
    retryable: false,
    fix: "Fix what the message says stopped the migration (the user's rights on the schema, a table changed by hand), then run `receivables-sync migrate`.",
  },
  STATE_DB_IN_USE: {
    kind: 'config',
    retryable: false,
    fix: 'Stop the process the message names, or use Postgres (DATABASE_URL) to run several processes on one state DB.',
  },
  STATE_DB_DISK_FULL: {
    kind: 'infrastructure',
    retryable: true,
    fix: 'Free space on the disk of state.dataDir (the embedded state DB keeps state.minFreeMb free); nothing was lost, the next pass resumes.',
  },
  STATE_SCOPE_INVALID: {
    kind: 'config',
    retryable: false,
    fix: 'Set the organization of the default connection (RECEIVABLES_ORGANIZATION_ID or api.organizationId) to a real organization id.',
  },

  // Alerts.
  ALERTS_CONFIG_INVALID: {
    kind: 'config',
    retryable: false,
    fix: "Set each alert target's variable (alerts.targets[].urlEnv) to an http(s) URL.",
  },
  ALERT_DELIVERY_FAILED: {
    kind: 'infrastructure',
    retryable: true,
    fix: "Check the alert target's URL and that it takes the post: a 4xx says the URL or its token is wrong; a network fault or a 5xx is retried.",
  },

  // The CSV source and the drop folder.
  CSV_MAPPING_INVALID: {
    kind: 'config',
    retryable: false,
    fix: 'Make each `mapping` target a contract column (the message lists them).',
  },
  CSV_DROP_DIR_MISSING: {
    kind: 'config',
    retryable: false,
    fix: "Create the drop folder (mkdir -p), or fix the source's dropDir.",
  },
  CSV_DROP_DIR_UNSAFE: {
    kind: 'config',
    retryable: false,
    fix: 'Remove the link or file the message names in the drop folder (the next pass creates a real folder) and check who can write there.',
  },
  CSV_DROP_DIR_FULL: {
    kind: 'infrastructure',
    retryable: true,
    fix: 'Free space on the disk the message names (the drop folder, or archive/ mounted elsewhere); the file went back to the drop folder and the next pass reads it again.',
  },
  CSV_UNIT_MISUSED: {
    kind: 'config',
    retryable: false,
    fix: 'Report the message as a bug of receivables-sync: a file was read or completed out of order.',
  },
  CSV_PARSE_FAILED: {
    kind: 'data',
    retryable: false,
    fix: 'Fix the file from the line the message names (an unclosed quote, or a delimiter or encoding other than `format:` says), then drop it again.',
  },
  CSV_UPLOAD_NAME_REFUSED: {
    kind: 'data',
    retryable: false,
    fix: "Rename the file as the message says: not starting with a dot, not too long, and matching one of the source's file patterns (`files:`).",
  },
  CSV_UPLOAD_TOO_LARGE: {
    kind: 'data',
    retryable: false,
    fix: 'Split the file, or copy it into the drop folder yourself, or raise dashboard.uploadMaxMb.',
  },
  CSV_UPLOAD_UNKNOWN: {
    kind: 'data',
    retryable: false,
    fix: 'Nothing to do: the upload was synced or discarded already; upload the file again if needed.',
  },
  CSV_UPLOAD_NAME_TAKEN: {
    kind: 'data',
    retryable: false,
    fix: 'Wait for the next pass to take the file of that name, or discard this upload and upload it under another name.',
  },

  // The SQL source.
  SQL_CONFIG_INVALID: {
    kind: 'config',
    retryable: false,
    fix: "Fix the source's setting the message names (urlEnv and its variable, the URL's scheme and parameters, the streams, filesDir).",
  },
  SQL_CONNECT_FAILED: {
    kind: 'infrastructure',
    retryable: true,
    fix: "Check that the billing database at the source's URL is up and accepts its user; the next pass tries again.",
  },
  SQL_QUERY_FAILED: {
    kind: 'config',
    retryable: false,
    fix: "Fix the stream's query as the database's message says, in that database's dialect, and give its user read access.",
  },
  SQL_STATEMENT_TIMEOUT: {
    kind: 'infrastructure',
    retryable: true,
    fix: "Index the stream's cursor columns, or raise the source's statementTimeoutMs.",
  },
  SQL_COLUMNS_MISSING: {
    kind: 'config',
    retryable: false,
    fix: "Make the stream's query return the columns the message names (the contract's and the cursor's).",
  },
  SQL_UNIT_MISUSED: {
    kind: 'config',
    retryable: false,
    fix: 'Report the message as a bug of receivables-sync: a stream was read or completed out of order.',
  },

  // The Singer source.
  SINGER_TAP_START_FAILED: {
    kind: 'infrastructure',
    retryable: false,
    fix: "Install the tap, or fix the source's `command` so that its first word is an executable on the PATH.",
  },
  SINGER_TAP_FAILED: {
    kind: 'infrastructure',
    retryable: true,
    fix: 'Fix what the tap reported (its last lines are in the message, often its config or credentials); the next pass resumes from the last stored STATE.',
  },
  SINGER_TAP_TIMEOUT: {
    kind: 'infrastructure',
    retryable: true,
    fix: "Check why the tap went silent (its API, its credentials), or raise the source's timeoutSeconds; the next pass resumes from the last stored STATE.",
  },
  SINGER_MESSAGE_INVALID: {
    kind: 'infrastructure',
    retryable: false,
    fix: 'Make the tap write Singer messages only on stdout: one JSON object with a `type` per line, each SCHEMA before its RECORDs, logs on stderr.',
  },
  SINGER_DISCOVERY_FAILED: {
    kind: 'infrastructure',
    retryable: false,
    fix: 'Give the source a `catalog` file, or check that the tap discovers the streams named under `streams:`.',
  },

  // Module sources.
  MODULE_SOURCE_NOT_FOUND: {
    kind: 'config',
    retryable: false,
    fix: 'Fix the module path (relative to the configuration file), or install the package it names.',
  },
  MODULE_SOURCE_FAILED: {
    kind: 'config',
    retryable: false,
    fix: 'Fix the error the module or its factory threw (the message gives it).',
  },
  MODULE_SOURCE_INVALID: {
    kind: 'config',
    retryable: false,
    fix: 'Export a factory `(options, context) => source` (default export, or `createSource`), or a source with `units()` itself.',
  },
  MODULE_UNIT_INVALID: {
    kind: 'data',
    retryable: false,
    fix: "Make the module's units `{ stream, batches(), complete?() }` with a contract stream, and each batch `{ records: [...], rejected?: [...] }`.",
  },

  // The dashboard: its setup, and what its routes answer (a 4xx is the request's, a 5xx a part's).
  DASHBOARD_CREDENTIALS_REQUIRED: {
    kind: 'config',
    retryable: false,
    fix: 'Set DASHBOARD_USER and DASHBOARD_PASSWORD, or serve on this machine only (DASHBOARD_HOST=127.0.0.1).',
  },
  DASHBOARD_CREDENTIALS_INCOMPLETE: {
    kind: 'config',
    retryable: false,
    fix: 'Set both DASHBOARD_USER and DASHBOARD_PASSWORD, or neither.',
  },
  DASHBOARD_SOURCE_UNKNOWN: {
    kind: 'data',
    retryable: false,
    fix: "Use a source id of the configuration: the dashboard's home page lists them.",
  },
  DASHBOARD_ACTION_UNKNOWN: {
    kind: 'data',
    retryable: false,
    fix: "Use an action of the source's page; a connection test needs the dashboard `worker` serves.",
  },
  DASHBOARD_RECORD_UNKNOWN: {
    kind: 'data',
    retryable: false,
    fix: "Check the record's kind and source key: only a record synced before can be synced again.",
  },
  DASHBOARD_INPUT_INVALID: {
    kind: 'data',
    retryable: false,
    fix: "Send the fields the dashboard's forms send: a kind of account, invoice or creditNote, with the source and its key.",
  },
  DASHBOARD_SOURCE_PAUSED: {
    kind: 'data',
    retryable: false,
    fix: 'Resume the source first (Resume on its page, or `receivables-sync resume --source ID`).',
  },
  DASHBOARD_SELECTION_EMPTY: {
    kind: 'data',
    retryable: false,
    fix: 'Select at least one open failure (and no more than the message says).',
  },
  DASHBOARD_REASON_REQUIRED: {
    kind: 'data',
    retryable: false,
    fix: "Give a reason of 1 to 500 characters: it is kept in the failure's history.",
  },
  DASHBOARD_RUN_UNKNOWN: {
    kind: 'data',
    retryable: false,
    fix: "Open the run from its source's page: no run has this number.",
  },
  DASHBOARD_RECONCILIATION_UNKNOWN: {
    kind: 'data',
    retryable: false,
    fix: "Open the reconciliation from its source's page: this source has none of this number.",
  },
  DASHBOARD_REPORT_MISSING: {
    kind: 'data',
    retryable: false,
    fix: "Look for the report beside the archived file on the worker's machine: this file has none here, or it was removed.",
  },
  DASHBOARD_EXPORT_UNAVAILABLE: {
    kind: 'data',
    retryable: false,
    fix: 'Export failures from the dashboard that `worker` or `dashboard` serves.',
  },
  DASHBOARD_UPLOAD_INVALID: {
    kind: 'data',
    retryable: false,
    fix: 'Send the file as multipart/form-data, as the upload form does.',
  },
  DASHBOARD_UPLOAD_EMPTY: {
    kind: 'data',
    retryable: false,
    fix: 'Choose a file before sending the form.',
  },
  DASHBOARD_UPLOAD_UNSUPPORTED: {
    kind: 'data',
    retryable: false,
    fix: 'Upload files to a CSV source only (one with a drop folder).',
  },
  DASHBOARD_UPLOAD_UNKNOWN: {
    kind: 'data',
    retryable: false,
    fix: 'Nothing to do: the upload was synced or discarded already.',
  },
  DASHBOARD_UPLOADS_UNAVAILABLE: {
    kind: 'infrastructure',
    retryable: false,
    fix: 'Upload through the dashboard `worker` serves: it previews and takes files.',
  },
  DASHBOARD_NO_QUEUES: {
    kind: 'infrastructure',
    retryable: false,
    fix: 'Act through the dashboard `worker` serves (with REDIS_URL): the standalone `dashboard` queues no jobs.',
  },
  DASHBOARD_QUEUE_UNAVAILABLE: {
    kind: 'infrastructure',
    retryable: true,
    fix: 'Check that Redis answers, then try the action again.',
  },
  DASHBOARD_INTERNAL: {
    kind: 'infrastructure',
    retryable: false,
    fix: "Read the dashboard's log for the error the answer hides, and report it if no outage explains it.",
  },

  // The dashboard: requests refused before any route.
  DASHBOARD_UNAUTHORIZED: {
    kind: 'data',
    retryable: false,
    fix: "Sign in, or send the dashboard's user and password with HTTP Basic.",
  },
  DASHBOARD_SIGN_IN_THROTTLED: {
    kind: 'data',
    retryable: true,
    fix: 'Wait the seconds the answer gives (Retry-After), then sign in with the right password.',
  },
  DASHBOARD_HOST_REFUSED: {
    kind: 'data',
    retryable: false,
    fix: 'Open the dashboard as 127.0.0.1 or localhost, or set DASHBOARD_USER and DASHBOARD_PASSWORD to serve other host names.',
  },
  DASHBOARD_CSRF_REFUSED: {
    kind: 'data',
    retryable: false,
    fix: 'Reload the page and act again: its form token was missing or stale.',
  },
  DASHBOARD_ORIGIN_REFUSED: {
    kind: 'data',
    retryable: false,
    fix: "Act from the dashboard's own pages: a request from another site is refused.",
  },
  DASHBOARD_QUEUE_ADMIN_OFF: {
    kind: 'data',
    retryable: false,
    fix: 'Set dashboard.queueAdmin: true to administer the queues in bull-board.',
  },
  DASHBOARD_BAD_REQUEST: {
    kind: 'data',
    retryable: false,
    fix: 'Correct the request as the message says.',
  },
  DASHBOARD_STARTING: {
    kind: 'infrastructure',
    retryable: true,
    fix: 'Wait: the worker is starting (the answer names what it waits for), and the page reloads by itself.',
  },

  // The command line.
  CLI_USAGE: {
    kind: 'config',
    retryable: false,
    fix: "Correct the command line as the message says: `--help` lists each command's flags, and `--source` names a source id of the configuration.",
  },
  CLI_SOURCES_NOT_SYNCED: {
    kind: 'infrastructure',
    retryable: true,
    fix: 'Fix the cause the line names (with its own code; `doctor` checks the setup), then run the command again: nothing was lost.',
  },
  CLI_SOURCES_PAUSED: {
    kind: 'config',
    retryable: false,
    fix: 'Once the cause of the pause is fixed, resume the source (`receivables-sync resume --source ID`, or its dashboard page).',
  },
  CLI_NO_WORKING_CREDENTIALS: {
    kind: 'config',
    retryable: false,
    fix: 'Run `receivables-sync auth login` (or `auth import`), or fix or unset RECEIVABLES_ACCESS_TOKEN.',
  },
} as const satisfies Readonly<Record<string, ErrorCodeEntry>>;

/** A code of the catalogue: `new AppError('TYPO', …)` does not compile. */
export type ErrorCode = keyof typeof ERROR_CODES;

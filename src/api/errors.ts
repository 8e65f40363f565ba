import { AppError, type ErrorKind } from '../domain/errors.js';

/**
 * Errors of the API client. Every one has a stable `code`, a `kind` and says whether retrying can
 * help: its own codes take both from the catalogue (`NETWORK_ERROR`, `TIMEOUT`...); the answers'
 * codes, which are the API's, are classified here and nowhere else (`isRetryableStatus`,
 * `kindOfStatus`).
 */
export class ReceivablesError extends AppError {}

/** Statuses worth retrying (with the same Idempotency-Key): timeouts, rate limit, idempotency 409/503, 5xx. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/**
 * A write refused because the record is read-only (a connector manages it): the spec shows its code,
 * not its status (400 in the contract; a server may answer 403, 409 or 422). Its code decides.
 */
const isManagedRefusal = (apiCode: string | undefined): boolean =>
  apiCode?.endsWith('managed-action-forbidden') ?? false;

/**
 * A 409 that is not the idempotency one. The spec's only 409 is "a request with this key is still
 * running" (with Retry-After, to be retried); its code, like the status of a duplicate `sourceId`
 * or of a source already linked, is not shown. A 409 with a code that does not speak of
 * idempotency and no Retry-After is the service telling that the record conflicts with one it
 * holds: the record's problem (a lookup adopts the existing one), never retried.
 */
export function isConflictOfData(status: number, apiCode?: string, retryAfterSeconds?: number): boolean {
  return (
    status === 409 && apiCode !== undefined && !/idempot/i.test(apiCode) && retryAfterSeconds === undefined
  );
}

/**
 * Whose problem an error status is: 401, 403 (a token without the scope) and the retryable
 * statuses are the service's or our credentials' (`infrastructure`); any other 4xx, and a write
 * refused because the record is read-only (`managed-action-forbidden`, whatever its status), is
 * about the record sent (`data`).
 */
export function kindOfStatus(status: number, apiCode?: string): ErrorKind {
  if (isManagedRefusal(apiCode)) return 'data';
  if (status === 401 || status === 403 || isRetryableStatus(status)) return 'infrastructure';
  return 'data';
}

/** The API answered with an error status; keeps the API's own `code`, message and resolution. */
export class ApiResponseError extends ReceivablesError {
  declare readonly status: number;
  readonly apiCode: string | undefined;
  readonly resolution: string | undefined;
  readonly method: string;
  readonly path: string;
  readonly retryAfterSeconds: number | undefined;
  constructor(init: {
    status: number;
    method: string;
    path: string;
    apiCode?: string | undefined;
    message?: string | undefined;
    resolution?: string | undefined;
    retryAfterSeconds?: number | undefined;
  }) {
    const code = init.apiCode ?? `HTTP_${init.status}`;
    const conflict = isConflictOfData(init.status, init.apiCode, init.retryAfterSeconds);
    super(
      {
        // The API's own code (or the status's, when it gave none): its answer decides.
        code,
        kind: conflict ? 'data' : kindOfStatus(init.status, init.apiCode),
        // A read-only record stays read-only, and a conflict with what the service holds stays a
        // conflict: never retried, whatever status carries the refusal.
        retryable: isRetryableStatus(init.status) && !isManagedRefusal(init.apiCode) && !conflict,
      },
      `${init.method} ${init.path} answered ${init.status} ${code}: ${init.message ?? 'no message'}`,
      { status: init.status },
    );
    this.apiCode = init.apiCode;
    this.resolution = init.resolution;
    this.method = init.method;
    this.path = init.path;
    this.retryAfterSeconds = init.retryAfterSeconds;
  }
}

/**
 * An answer the client cannot use, which says nothing about the record sent: a 2xx without what the
 * contract gives (an empty body, `{}` where an `id` is due, HTML: `RESPONSE_INVALID`), or an error
 * status whose body is not the API's JSON error (a proxy's or a load balancer's page: `HTTP_<status>`).
 * A 2xx is `infrastructure` and retried with the same Idempotency-Key (the service replays what it
 * stored), then the pass stops like an outage. An error status is retried as its status says (5xx,
 * 408, 429) and is whose problem its status says, except a 404: `infrastructure`, since it is not the
 * API saying that a resource (an organization, an account) is missing, and nothing reads it so.
 * The message says the status, the content type and a short printable excerpt of the body.
 */
export class UnexpectedResponseError extends ReceivablesError {
  declare readonly status: number;
  readonly method: string;
  readonly path: string;
  /** The media type of the answer (`text/html`), when it had one. */
  readonly contentType: string | undefined;
  /** The body, tags stripped and whitespace collapsed, at most ~200 characters. */
  readonly excerpt: string;
  readonly retryAfterSeconds: number | undefined;
  constructor(init: {
    status: number;
    method: string;
    path: string;
    contentType: string | undefined;
    excerpt: string;
    /** What is wrong, after "answered <status> (<type>)": `without what the contract gives (no "id")`. */
    problem: string;
    retryAfterSeconds?: number | undefined;
    cause?: unknown;
  }) {
    const success = init.status < 400;
    const body = init.excerpt === '' ? '' : `: ${init.excerpt}`;
    super(
      success
        ? 'RESPONSE_INVALID'
        : {
            code: `HTTP_${init.status}`,
            // A proxy refusing what we sent (413: the file is too large for it) is still about the
            // record; a 404 is not the service saying the record or its organization is missing.
            kind: init.status === 404 ? 'infrastructure' : kindOfStatus(init.status),
            retryable: isRetryableStatus(init.status),
          },
      `${init.method} ${init.path} answered ${init.status} (${init.contentType ?? 'no content type'}) ${init.problem}${body}`,
      { status: init.status, cause: init.cause },
    );
    this.method = init.method;
    this.path = init.path;
    this.contentType = init.contentType;
    this.excerpt = init.excerpt;
    this.retryAfterSeconds = init.retryAfterSeconds;
  }
}

/** The request did not get an answer: connection refused or reset, DNS, TLS. Retryable. */
export class NetworkError extends ReceivablesError {
  constructor(message: string, cause?: unknown) {
    super('NETWORK_ERROR', message, { cause });
  }
}

/** No answer within the timeout. Retryable (writes carry an Idempotency-Key). */
export class TimeoutError extends ReceivablesError {
  constructor(message: string) {
    super('TIMEOUT', message);
  }
}

/** A filter that breaks the spec's limits or allow-list, refused before any request is sent. */
export class FilterError extends ReceivablesError {
  constructor(message: string) {
    super('FILTER_INVALID', message);
  }
}

/** The stored credentials cannot be used any more (invalid_grant, revoked): run `auth login` again. */
export class LoginRequiredError extends ReceivablesError {
  /** @param fix what the user should do (default: log in again). */
  constructor(reason: string, fix = 'Run `receivables-sync auth login` (or `auth import`) again.') {
    super('LOGIN_REQUIRED', `${reason}. ${fix}`);
  }
}

/** A pagination that would loop (the server returned a cursor it already gave). */
export class PaginationError extends ReceivablesError {
  constructor(message: string) {
    super('PAGINATION_LOOP', message);
  }
}

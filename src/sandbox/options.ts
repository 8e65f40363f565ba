import type { Clock } from '../domain/clock.js';
import { systemClock } from '../domain/clock.js';
import {
  CONTRACT_CREATE_PAID_FIELD,
  CONTRACT_DOCUMENT_ROUTE,
  type DocumentRoute,
} from '../domain/document-route.js';

/** A rate-limit policy: `quota` requests per sliding window of `windowSeconds`. */
export interface RatePolicy {
  quota: number;
  windowSeconds: number;
}

/** Faults the sandbox injects, set at start (`sandbox --fault-*`) or at run time (`PUT /__sandbox/faults`). */
export interface FaultConfig {
  /** Share (0..1) of authenticated API requests answered with one of `errorStatuses` before anything runs. */
  errorRate: number;
  errorStatuses: number[];
  /** Added to the execution of every API request (after the idempotency check), in milliseconds. */
  latencyMs: number;
  /** Share (0..1) of successful writes whose connection is dropped after the write was committed. */
  dropAfterCommitRate: number;
  /** The next N authenticated API requests get a 429 with `force429RetryAfter` seconds. */
  force429: number;
  force429RetryAfter: number;
  /** When true, every write with an Idempotency-Key answers 503 and nothing runs. */
  idempotencyStoreDown: boolean;
}

export const NO_FAULTS: FaultConfig = {
  errorRate: 0,
  errorStatuses: [500, 502, 503],
  latencyMs: 0,
  dropAfterCommitRate: 0,
  force429: 0,
  force429RetryAfter: 1,
  idempotencyStoreDown: false,
};

/**
 * Where the spec says "not shown", the sandbox's choice, switchable so the client is tested against
 * each plausible server (see docs/sandbox.md).
 */
export interface SandboxCompat {
  /**
   * What the `source` filter of `GET /accounts` compares: the source's `sourceId` (the default),
   * its `connectionId`, or its `connectorType` (`Custom`...). The spec names the field, not its value.
   */
  accountSourceFilter: 'sourceId' | 'connectionId' | 'connectorType';
  /**
   * The `resource` its protected resource metadata names: `api`, `{base_url}/api/public/v1` (the
   * default), or `base`, `{base_url}` (what RFC 9728 derives from the well-known address the spec
   * gives, `{base_url}/.well-known/oauth-protected-resource`).
   */
  protectedResource: 'api' | 'base';
  /**
   * The status of `app-invoicing.document.managed-action-forbidden` (a write on a record a connector
   * manages): the spec shows the code, not the status; the contract's default is 400.
   */
  managedActionStatus: 400 | 403 | 409 | 422;
  /**
   * The status of a duplicate: a document `sourceId` already used (`...duplicate-source-id`, 400 in
   * the spec) and an account source already linked (`...duplicate-source`,
   * `...source-already-linked`: not shown).
   */
  duplicateSourceStatus: 400 | 409 | 422;
  /**
   * The write that sets a document's paid amount / due date ("a PATCH ... exists; paths and bodies
   * not shown"): the contract's `PATCH /{kind}/{id}` with `{paidAmount, dueDate}` by default.
   */
  documentPatch: SandboxDocumentRoute;
  /** Whether `POST /invoices` takes a paid amount (form field `createPaidField`); refused as unknown otherwise. */
  createPaid: boolean;
  createPaidField: string;
}

export type SandboxDocumentRoute = DocumentRoute;

export const DEFAULT_COMPAT: SandboxCompat = {
  accountSourceFilter: 'sourceId',
  protectedResource: 'api',
  managedActionStatus: 400,
  duplicateSourceStatus: 400,
  documentPatch: CONTRACT_DOCUMENT_ROUTE,
  createPaid: false,
  createPaidField: CONTRACT_CREATE_PAID_FIELD,
};

export interface SandboxOptions {
  /** Public API budget per access token. Spec default: 300 per 60 s. */
  rateLimit: RatePolicy;
  /** Token endpoint budget per IP address. Spec default: 10 per 60 s. */
  tokenRateLimit: RatePolicy;
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  authorizationCodeTtlSeconds: number;
  idempotencyRetentionSeconds: number;
  invitationLifetimeDays: number;
  /** OAuth client ids the authorization server knows (public clients, PKCE). */
  clientIds: string[];
  faults: FaultConfig;
  compat: SandboxCompat;
  /** Fixed ids for the seeded organization and token (stable demos); random when absent. */
  organizationId?: string | undefined;
  accessToken?: string | undefined;
  adminToken?: string | undefined;
  clock: Clock;
  /** Randomness for fault injection; `Math.random` unless a test fixes it. */
  random: () => number;
}

/** What a caller may override: any option, and any part of `faults` and `compat`. */
export type SandboxOverrides = Partial<Omit<SandboxOptions, 'faults' | 'compat'>> & {
  faults?: Partial<FaultConfig>;
  compat?: Partial<Omit<SandboxCompat, 'documentPatch'>> & { documentPatch?: Partial<SandboxDocumentRoute> };
};

export function sandboxOptions(overrides: SandboxOverrides = {}): SandboxOptions {
  return {
    rateLimit: { quota: 300, windowSeconds: 60 },
    tokenRateLimit: { quota: 10, windowSeconds: 60 },
    accessTokenTtlSeconds: 3600,
    refreshTokenTtlSeconds: 30 * 24 * 3600,
    authorizationCodeTtlSeconds: 60,
    idempotencyRetentionSeconds: 24 * 3600,
    invitationLifetimeDays: 7,
    clientIds: ['receivables-sync'],
    clock: systemClock,
    random: Math.random,
    ...overrides,
    faults: { ...NO_FAULTS, ...overrides.faults },
    compat: {
      ...DEFAULT_COMPAT,
      ...overrides.compat,
      documentPatch: { ...DEFAULT_COMPAT.documentPatch, ...overrides.compat?.documentPatch },
    },
  };
}

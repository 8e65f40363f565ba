import { Command, InvalidArgumentError, Option } from 'commander';
import {
  DEFAULT_COMPAT,
  NO_FAULTS,
  type SandboxCompat,
  type SandboxDocumentRoute,
  type SandboxOverrides,
} from '../sandbox/options.js';

const int = (name: string, min: number) => (raw: string) => {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`${name} must be an integer >= ${min}`);
  return n;
};
const share = (raw: string) => {
  const n = Number(raw);
  if (!(n >= 0 && n <= 1)) throw new InvalidArgumentError('must be a number from 0 to 1');
  return n;
};
const statuses = (raw: string) => raw.split(',').map((s) => int('status', 400)(s.trim()));

interface SandboxFlags {
  port: number;
  host: string;
  quota: number;
  window: number;
  tokenQuota: number;
  accessTokenTtl: number;
  organizationId?: string;
  accessToken?: string;
  adminToken?: string;
  faultErrorRate: number;
  faultStatuses: number[];
  faultLatency: number;
  faultDropAfterCommit: number;
  faultIdempotencyDown: boolean;
  compatAccountSourceFilter: SandboxCompat['accountSourceFilter'];
  compatProtectedResource: SandboxCompat['protectedResource'];
  compatManagedActionStatus: string;
  compatDuplicateSourceStatus: string;
  compatDocumentPatch: Pick<SandboxDocumentRoute, 'method' | 'path'>;
  compatDocumentFields: Pick<SandboxDocumentRoute, 'paidAmountField' | 'dueDateField'>;
  compatCreatePaid: string | boolean;
}

/** `PUT /{kind}/{id}/payment`: the method and path of the document write. */
function documentRoute(value: string): Pick<SandboxDocumentRoute, 'method' | 'path'> {
  const m = /^(PATCH|PUT|POST)\s+(\/\S*\{id\}\S*)$/.exec(value.trim());
  if (!m) {
    throw new InvalidArgumentError(
      'expected "<PATCH|PUT|POST> <path with {id}>", e.g. "PUT /{kind}/{id}/payment"',
    );
  }
  return { method: m[1] as SandboxDocumentRoute['method'], path: m[2]! };
}

/** `amountPaid,dueOn`: the body's field names of the paid amount and the due date. */
function documentFields(value: string): Pick<SandboxDocumentRoute, 'paidAmountField' | 'dueDateField'> {
  const parts = value.split(',').map((p) => p.trim());
  if (parts.length !== 2 || parts.some((p) => !/^[A-Za-z_][A-Za-z0-9_.]*$/.test(p))) {
    throw new InvalidArgumentError(
      'expected "<paid amount field>,<due date field>", e.g. "amountPaid,dueOn"',
    );
  }
  return { paidAmountField: parts[0]!, dueDateField: parts[1]! };
}

export function sandboxCommand(): Command {
  return new Command('sandbox')
    .description(
      'Serve a local, spec-faithful Receivables Public API. The first stdout line is one JSON object ' +
        '{"baseUrl","organizationId","accessToken","adminToken",...}; it serves until SIGINT/SIGTERM.',
    )
    .option('--port <n>', 'port to listen on (0 = any free port)', int('port', 0), 4010)
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option('--quota <n>', 'API requests allowed per window and access token', int('quota', 1), 300)
    .option('--window <seconds>', 'rate-limit window in seconds', int('window', 1), 60)
    .option(
      '--token-quota <n>',
      'token endpoint requests per window and IP address',
      int('token quota', 1),
      10,
    )
    .option(
      '--access-token-ttl <seconds>',
      'lifetime of access tokens issued by /api/oauth/token',
      int('ttl', 1),
      3600,
    )
    .option('--organization-id <uuid>', 'fixed id for the seeded organization')
    .option('--access-token <token>', 'fixed value for the printed access token')
    .option('--admin-token <token>', 'fixed value for the /__sandbox admin token')
    .option('--fault-error-rate <share>', 'share of API requests answered with an injected error', share, 0)
    .option(
      '--fault-statuses <list>',
      'statuses of injected errors, comma-separated',
      statuses,
      NO_FAULTS.errorStatuses,
    )
    .option('--fault-latency <ms>', 'latency added to every API request', int('latency', 0), 0)
    .option(
      '--fault-drop-after-commit <share>',
      'share of successful writes whose connection is dropped',
      share,
      0,
    )
    .option('--fault-idempotency-down', 'answer 503 to every write carrying an Idempotency-Key', false)
    .addOption(
      new Option(
        '--compat-account-source-filter <field>',
        'what the `source` filter of GET /accounts compares (not shown in the spec)',
      )
        .choices(['sourceId', 'connectionId', 'connectorType'])
        .default('sourceId'),
    )
    .addOption(
      new Option(
        '--compat-protected-resource <form>',
        'the `resource` of the protected resource metadata: api ({base_url}/api/public/v1) or base ({base_url})',
      )
        .choices(['api', 'base'])
        .default('api'),
    )
    .addOption(
      new Option(
        '--compat-managed-action-status <status>',
        'the HTTP status of managed-action-forbidden (a write on a record a connector manages)',
      )
        .choices(['400', '403', '409', '422'])
        .default('400'),
    )
    .addOption(
      new Option(
        '--compat-duplicate-source-status <status>',
        'the HTTP status of a duplicate document sourceId or an account source already linked',
      )
        .choices(['400', '409', '422'])
        .default('400'),
    )
    .option(
      '--compat-document-patch <route>',
      "method and path of the write that sets a document's paid amount / due date",
      documentRoute,
      { method: DEFAULT_COMPAT.documentPatch.method, path: DEFAULT_COMPAT.documentPatch.path },
    )
    .option('--compat-document-fields <paid,due>', 'body field names of that write', documentFields, {
      paidAmountField: DEFAULT_COMPAT.documentPatch.paidAmountField,
      dueDateField: DEFAULT_COMPAT.documentPatch.dueDateField,
    })
    .option(
      '--compat-create-paid [field]',
      'POST /invoices and /credit-notes take a paid amount (form field, default paidAmount)',
      false,
    )
    .action(async (flags: SandboxFlags) => {
      const overrides: SandboxOverrides = {
        rateLimit: { quota: flags.quota, windowSeconds: flags.window },
        tokenRateLimit: { quota: flags.tokenQuota, windowSeconds: 60 },
        accessTokenTtlSeconds: flags.accessTokenTtl,
        organizationId: flags.organizationId,
        accessToken: flags.accessToken,
        adminToken: flags.adminToken,
        faults: {
          ...NO_FAULTS,
          errorRate: flags.faultErrorRate,
          errorStatuses: flags.faultStatuses,
          latencyMs: flags.faultLatency,
          dropAfterCommitRate: flags.faultDropAfterCommit,
          idempotencyStoreDown: flags.faultIdempotencyDown,
        },
        compat: {
          accountSourceFilter: flags.compatAccountSourceFilter,
          protectedResource: flags.compatProtectedResource,
          managedActionStatus: Number(
            flags.compatManagedActionStatus,
          ) as SandboxCompat['managedActionStatus'],
          duplicateSourceStatus: Number(
            flags.compatDuplicateSourceStatus,
          ) as SandboxCompat['duplicateSourceStatus'],
          documentPatch: { ...flags.compatDocumentPatch, ...flags.compatDocumentFields },
          createPaid: flags.compatCreatePaid !== false,
          createPaidField:
            typeof flags.compatCreatePaid === 'string'
              ? flags.compatCreatePaid
              : DEFAULT_COMPAT.createPaidField,
        },
      };
      const { startSandbox } = await import('../sandbox/server.js');
      const sandbox = await startSandbox({ port: flags.port, host: flags.host }, overrides);
      const ready = {
        baseUrl: sandbox.baseUrl,
        organizationId: sandbox.organizationId,
        accessToken: sandbox.accessToken,
        adminToken: sandbox.adminToken,
        clientId: sandbox.clientId,
        rateLimit: overrides.rateLimit,
      };
      process.stdout.write(`${JSON.stringify(ready)}\n`);
      process.stderr.write(
        `Sandbox serving ${sandbox.baseUrl}/api/public/v1 (try: curl -i -H "Authorization: Bearer ${sandbox.accessToken}" ${sandbox.baseUrl}/api/public/v1/organizations). Ctrl-C stops it.\n`,
      );
      await new Promise<void>((resolve) => {
        const stop = () => resolve();
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
      await sandbox.close();
    });
}

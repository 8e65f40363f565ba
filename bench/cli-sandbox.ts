import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';

/** What the sandbox's first stdout line says of itself. */
export interface SandboxInfo {
  baseUrl: string;
  accessToken: string;
  organizationId: string;
  adminToken: string;
}

/** The CLI's sandbox in a process of its own, and the env that points the CLI at it. */
export interface CliSandbox {
  child: ChildProcess;
  info: SandboxInfo;
  env: NodeJS.ProcessEnv;
}

/**
 * Starts the built CLI's `sandbox` (`bin`, run by `node`) on a free port with a quota of `quota`
 * requests per 60 s, high enough by default that the rate limit is not what a benchmark measures;
 * resolves once its first stdout line (its address and tokens) is read.
 */
export async function startCliSandbox(
  bin: string,
  options: { quota?: number; node?: string } = {},
): Promise<CliSandbox> {
  const quota = options.quota ?? 1_000_000;
  const child = spawn(
    options.node ?? process.execPath,
    [bin, 'sandbox', '--port', '0', '--quota', String(quota)],
    {
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
  const [first] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  const info = JSON.parse(first) as SandboxInfo;
  return {
    child,
    info,
    env: {
      RECEIVABLES_BASE_URL: info.baseUrl,
      RECEIVABLES_ACCESS_TOKEN: info.accessToken,
      RECEIVABLES_ORGANIZATION_ID: info.organizationId,
      LOG_LEVEL: 'warn',
    },
  };
}

import type { SandboxOverrides } from '../../src/sandbox/options.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/server.js';

export const API = '/api/public/v1';

export interface CallOptions {
  /** JSON body (serialised) or FormData (multipart). */
  body?: unknown;
  headers?: Record<string, string>;
  /** Bearer token; defaults to the sandbox's all-scopes token; `null` sends none. */
  token?: string | null;
  query?: Record<string, string | number | undefined>;
}

export interface CallResult<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** A running sandbox plus a small fetch wrapper for conformance tests (real HTTP). */
export interface TestSandbox extends RunningSandbox {
  call<T = any>(method: string, path: string, options?: CallOptions): Promise<CallResult<T>>;
  /** Calls an `/__sandbox/*` admin route. */
  admin<T = any>(method: string, path: string, body?: unknown): Promise<T>;
}

export async function startTestSandbox(overrides: SandboxOverrides = {}): Promise<TestSandbox> {
  const sandbox = await startSandbox({ port: 0 }, overrides);
  const call = async (method: string, path: string, options: CallOptions = {}) => {
    const url = new URL(
      path.startsWith('/api') || path.startsWith('/.well') || path.startsWith('/mcp')
        ? path
        : `${API}${path}`,
      sandbox.baseUrl,
    );
    for (const [k, v] of Object.entries(options.query ?? {}))
      if (v !== undefined) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = { ...options.headers };
    const token = options.token === undefined ? sandbox.accessToken : options.token;
    if (token) headers.authorization = `Bearer ${token}`;
    let body: RequestInit['body'];
    if (options.body instanceof FormData) body = options.body;
    else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] = 'application/json';
    }
    const response = await fetch(url, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {}
    return { status: response.status, headers: response.headers, body: parsed as any };
  };
  const admin = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(new URL(`/__sandbox${path}`, sandbox.baseUrl), {
      method,
      headers: {
        authorization: `Bearer ${sandbox.adminToken}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (response.status >= 400) throw new Error(`admin ${method} ${path}: ${response.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
  return { ...sandbox, call, admin } as TestSandbox;
}

/** A minimal valid PDF file. */
export const PDF_BYTES = Buffer.from(
  '%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n',
);

/**
 * An account a connector manages (`readOnlyReason` set), as the connector would have imported it
 * (admin seed): a write to it is refused with `managed-action-forbidden`.
 */
export const seedConnectorAccount = (
  sandbox: TestSandbox,
  options: { sourceId: string; connectionId?: string; fullName?: string; organizationId?: string },
) =>
  sandbox.admin('POST', '/accounts', {
    organizationId: options.organizationId ?? sandbox.organizationId,
    fullName: options.fullName ?? `Pennylane ${options.sourceId}`,
    source: {
      connectionId: options.connectionId ?? 'pl-1',
      sourceId: options.sourceId,
      connectorType: 'Pennylane',
      lastUpdate: '2026-01-01T00:00:00.000Z',
    },
    readOnlyReason: 'Pennylane',
  });

/** The environment that points the CLI, a worker or `loadConfig` at a sandbox, with its token. */
export const apiEnvOf = (sandbox: Pick<TestSandbox, 'baseUrl' | 'accessToken' | 'organizationId'>) => ({
  RECEIVABLES_BASE_URL: sandbox.baseUrl,
  RECEIVABLES_ACCESS_TOKEN: sandbox.accessToken,
  RECEIVABLES_ORGANIZATION_ID: sandbox.organizationId,
});

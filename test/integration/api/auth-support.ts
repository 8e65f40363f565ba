import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, type Logger } from '../../../src/logging/logger.js';

/** Shared helpers of the auth*.test.ts files. */

export const TOKEN_KEY = randomBytes(32).toString('hex');

/** One pino line, parsed. */
export type LogEntry = Record<string, unknown> & { level: number };

/**
 * A logger writing into memory, at debug level, through the production redaction: `text()` to
 * search for secrets, `entries()` to assert on the structured fields of the lines.
 */
export function captureLogs(): { log: Logger; text: () => string; entries: () => LogEntry[] } {
  const lines: string[] = [];
  const log = createLogger({ level: 'debug', destination: { write: (line: string) => lines.push(line) } });
  return { log, text: () => lines.join(''), entries: () => parseLogLines(lines.join('')) };
}

/** The pino lines of `text` (other lines, e.g. a stack trace on stderr, are skipped). */
export function parseLogLines(text: string): LogEntry[] {
  return text.split('\n').flatMap((line) => {
    if (!line.startsWith('{')) return [];
    try {
      return [JSON.parse(line) as LogEntry];
    } catch {
      return [];
    }
  });
}

/**
 * The info lines of `RefreshingTokenProvider` saying a refresh grant was obtained: the only lines
 * with `rotated` (whether the refresh token was rotated) and `expiresInSeconds`.
 */
export const refreshLines = (entries: LogEntry[]) =>
  entries.filter((e) => e.level === 30 && typeof e.rotated === 'boolean' && 'expiresInSeconds' in e);

export interface TokenCall {
  at: number;
  status: number;
  grantType: string;
}

/**
 * A fetch that records every token-endpoint call and every secret crossing the wire (codes,
 * verifiers, access and refresh tokens), so tests can count calls and search logs for secrets.
 */
export function recordingFetch(inner: typeof fetch = fetch) {
  const tokenCalls: TokenCall[] = [];
  const secrets = new Set<string>();
  const wrapped = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const isToken = url.pathname === '/api/oauth/token';
    if (isToken && init?.body) {
      const params = new URLSearchParams(String(init.body));
      for (const name of ['code', 'code_verifier', 'refresh_token']) {
        const value = params.get(name);
        if (value) secrets.add(value);
      }
    }
    const response = await inner(input, init);
    if (isToken) {
      const params = new URLSearchParams(String(init?.body ?? ''));
      tokenCalls.push({
        at: Date.now(),
        status: response.status,
        grantType: params.get('grant_type') ?? '?',
      });
      const body = (await response
        .clone()
        .json()
        .catch(() => ({}))) as Record<string, string | undefined>;
      for (const name of ['access_token', 'refresh_token']) if (body[name]) secrets.add(body[name]!);
    }
    return response;
  }) as typeof fetch;
  return { fetch: wrapped, tokenCalls, secrets };
}

/**
 * Plays the browser: opens the authorization URL (the sandbox consents at once and redirects),
 * then follows the redirect to the loopback receiver. Returns the redirect address and the code.
 */
export async function approveInBrowser(url: string, options: { follow?: boolean } = {}) {
  const authorize = await fetch(url, { redirect: 'manual' });
  await authorize.arrayBuffer();
  const location = authorize.headers.get('location');
  if (authorize.status !== 302 || !location) throw new Error(`authorize answered ${authorize.status}`);
  const code = new URL(location).searchParams.get('code') ?? '';
  let landing: Response | undefined;
  if (options.follow !== false) {
    landing = await fetch(location);
    await landing.text();
  }
  return { location, code, landingStatus: landing?.status };
}

export async function tempDir(): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'rs-auth-'));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** Asserts helper: the secrets (at least 8 characters, to skip trivia) that occur in `text`. */
export const leaked = (text: string, secrets: Iterable<string>) =>
  [...secrets].filter((s) => s.length >= 8 && text.includes(s));

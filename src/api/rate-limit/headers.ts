import type { RateInfo } from './types.js';

/** The policy name of the Public API in `RateLimit-Policy` / `RateLimit` (the token endpoint uses `auth`). */
export const PUBLIC_API_POLICY = 'public-api';

export interface ParseRateInfoOptions {
  /** When a header lists several policies, the one read; otherwise the first. Default `public-api`. */
  policyName?: string;
  /** Reference time for an HTTP-date `Retry-After` when the response has no `Date` header. */
  now?: Date;
}

/**
 * Reads the rate-limit headers of one response (spec, "Limits"):
 *
 * - `RateLimit-Policy: "public-api";q=300;w=60` → `policy` (name kept; q ≥ 1 and w > 0 or ignored)
 * - `RateLimit: "public-api";r=12;t=30` → `remaining`, `resetSeconds` (legacy `X-RateLimit-Remaining`
 *   and `X-RateLimit-Reset` are the fallback)
 * - `Retry-After: 30` or an HTTP-date → `retryAfterSeconds` (a date is measured from the response's
 *   `Date` header, so the client's clock skew does not matter)
 *
 * Parsing is structured-field-ish (RFC 8941 lists of items with parameters): spaces and parameter
 * order do not matter, unknown parameters are ignored, and an unreadable header is left out rather
 * than guessed.
 *
 * @example
 * const info = parseRateInfo(response.status, response.headers);
 * await limiter.observe(budgetKey, { ...info, elapsedMs });
 */
export function parseRateInfo(
  status: number,
  headers: Headers,
  options: ParseRateInfoOptions = {},
): RateInfo {
  const wanted = options.policyName ?? PUBLIC_API_POLICY;
  const info: RateInfo = { status };
  const reference = httpDate(headers.get('date')) ?? options.now ?? new Date();

  const policy = pick(parseList(headers.get('ratelimit-policy')), wanted);
  if (policy) {
    const quota = policy.params.get('q');
    const windowSeconds = policy.params.get('w');
    if (quota !== undefined && windowSeconds !== undefined && quota >= 1 && windowSeconds > 0) {
      info.policy = { name: policy.name, quota: Math.floor(quota), windowSeconds };
    }
  }

  const current = pick(parseList(headers.get('ratelimit')), wanted);
  const remaining = current?.params.get('r') ?? number(headers.get('x-ratelimit-remaining'));
  if (remaining !== undefined) info.remaining = Math.floor(remaining);
  const reset = current?.params.get('t') ?? legacyReset(headers.get('x-ratelimit-reset'), reference);
  if (reset !== undefined) info.resetSeconds = reset;

  const retryAfter = parseRetryAfter(headers.get('retry-after'), reference);
  if (retryAfter !== undefined) info.retryAfterSeconds = retryAfter;
  return info;
}

/** `Retry-After` as seconds: delta-seconds, or an HTTP-date measured from `reference` (never negative). */
export function parseRetryAfter(value: string | null, reference: Date): number | undefined {
  if (value === null) return undefined;
  const seconds = number(value);
  if (seconds !== undefined) return seconds;
  const at = httpDate(value);
  if (at === undefined) return undefined;
  return Math.max(0, Math.ceil((at.getTime() - reference.getTime()) / 1000));
}

interface ListMember {
  name: string;
  params: Map<string, number>;
}

/** An RFC 8941 list of items with numeric parameters: `"a";q=1;w=2, "b";q=3`. */
function parseList(value: string | null): ListMember[] {
  if (value === null) return [];
  const members: ListMember[] = [];
  for (const raw of splitOutsideQuotes(value, ',')) {
    const [item, ...params] = splitOutsideQuotes(raw, ';').map((part) => part.trim());
    if (item === undefined || item === '') continue;
    const name = /^"((?:[^"\\]|\\.)*)"$/.exec(item)?.[1]?.replace(/\\(.)/g, '$1') ?? item;
    const map = new Map<string, number>();
    for (const param of params) {
      const eq = param.indexOf('=');
      if (eq <= 0) continue;
      const parsed = number(param.slice(eq + 1));
      if (parsed !== undefined) map.set(param.slice(0, eq).trim().toLowerCase(), parsed);
    }
    members.push({ name, params: map });
  }
  return members;
}

function pick(members: ListMember[], name: string): ListMember | undefined {
  return members.find((m) => m.name === name) ?? members[0];
}

function splitOutsideQuotes(value: string, separator: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const char = value[i]!;
    if (char === '\\' && quoted && i + 1 < value.length) {
      current += char + value[++i];
      continue;
    }
    if (char === '"') quoted = !quoted;
    if (char === separator && !quoted) {
      parts.push(current);
      current = '';
    } else current += char;
  }
  parts.push(current);
  return parts;
}

/** A non-negative decimal number, or undefined. */
function number(value: string | null): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  return /^\d+(\.\d+)?$/.test(trimmed) ? Number(trimmed) : undefined;
}

function httpDate(value: string | null): Date | undefined {
  if (value === null || !/[a-z]/i.test(value)) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : new Date(ms);
}

function legacyReset(value: string | null, reference: Date): number | undefined {
  const at = number(value);
  if (at === undefined) return undefined;
  return Math.max(0, Math.ceil(at - reference.getTime() / 1000));
}

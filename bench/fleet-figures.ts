/**
 * The figures of `bench:fleet` (bench/fleet.ts): what the sandbox answered, per token and per
 * source, recorded by an `onResponse` hook; and the pure arithmetic over it (shares, Jain's index,
 * waits). See docs/performance.md, "Many tokens and sources: bench:fleet".
 */
import type { FastifyInstance } from 'fastify';
import { maxInAnySpan } from '../test/support/limiter-worker.js';
import { ROW_ID } from './fleet-scenario.js';

/** One API response of the sandbox. */
export interface ServedResponse {
  /** 1 to 4; responses of unknown tokens are not kept. */
  token: number;
  /** When the request arrived and when it was answered (ms, this process's clock). */
  arrivedAt: number;
  answeredAt: number;
  status: number;
  /** The source and file its body or URL names (account create, lookup), when it names one. */
  source?: string;
  file?: number;
}

/**
 * Records every authenticated API response of `app` (hook added before `listen`): its token's
 * number by `tokenNumber`, and the source and file its body or URL names.
 */
export function recordResponses(
  app: FastifyInstance,
  tokenNumber: (token: string) => number | undefined,
): ServedResponse[] {
  const served: ServedResponse[] = [];
  app.addHook('onResponse', async (request, reply) => {
    const token = request.auth ? tokenNumber(request.auth.token) : undefined;
    if (token === undefined) return;
    const answeredAt = Date.now();
    const named = namedRow(request.body, request.url);
    served.push({
      token,
      arrivedAt: answeredAt - reply.elapsedTime,
      answeredAt,
      status: reply.statusCode,
      ...(named ? { source: named.source, file: named.file } : {}),
    });
  });
  return served;
}

function namedRow(body: unknown, url: string): { source: string; file: number } | undefined {
  const found =
    (body && typeof body === 'object' ? ROW_ID.exec(JSON.stringify(body)) : null) ??
    ROW_ID.exec(safeDecode(url));
  return found ? { source: found[1]!, file: Number(found[2]) } : undefined;
}

const safeDecode = (url: string) => {
  try {
    return decodeURIComponent(url);
  } catch {
    return url;
  }
};

/**
 * Jain's fairness index of the amounts: (Σx)² / (n·Σx²), 1 when all are equal, 1/n when one
 * takes everything. 1 for an empty or all-zero list (nothing to be unfair about).
 */
export function jainIndex(amounts: readonly number[]): number {
  const sum = amounts.reduce((a, b) => a + b, 0);
  const squares = amounts.reduce((a, b) => a + b * b, 0);
  return squares === 0 ? 1 : (sum * sum) / (amounts.length * squares);
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export const round3 = (x: number) => Math.round(x * 1000) / 1000;

export interface Window {
  from: number;
  to: number;
}

export const inWindow = (at: number, window: Window) => at >= window.from && at < window.to;

export interface TokenFigures {
  token: number;
  /** Requests the sandbox counted (answered, not 429) in the window. */
  counted: number;
  /** What the policy allows in the window: window / w × q. */
  allowed: number;
  share: number;
  /**
   * The long-run share when the budget goes in bursts: the requests of the whole bursts between the
   * window's second burst and its last one, over q per w of the time between their starts. Absent
   * with fewer than 3 bursts (a budget not saturated, or used smoothly).
   */
  cycleShare?: number;
  /** Bursts (requests separated by more than w / 4) in the window, and their mean period (ms). */
  bursts: number;
  cycleMs?: number;
  rateLimitedInWindow: number;
  rateLimitedInRun: number;
  /** Most requests counted in any w seconds of the whole run (≤ q, else the limiter overran). */
  maxInAnyWindow: number;
  /** Most requests counted in any 1 s of the window: q when each window's budget goes in one burst. */
  maxInAnySecond: number;
  /** The longest time in the window with no request counted (ms). */
  longestGapMs: number;
}

/** Per token: counted requests and 429s in the window, its share of the policy, 429s of the run. */
export function tokenFigures(
  served: readonly ServedResponse[],
  token: number,
  window: Window,
  policy: { quota: number; windowSeconds: number },
): TokenFigures {
  const mine = served.filter((r) => r.token === token);
  const counted = mine.filter((r) => r.status !== 429);
  const times = counted.filter((r) => inWindow(r.arrivedAt, window)).map((r) => r.arrivedAt);
  const inside = times.length;
  const allowed = ((window.to - window.from) / (policy.windowSeconds * 1000)) * policy.quota;
  return {
    token,
    counted: inside,
    allowed: round3(allowed),
    share: round3(inside / allowed),
    ...cycles(times, policy),
    rateLimitedInWindow: mine.filter((r) => r.status === 429 && inWindow(r.arrivedAt, window)).length,
    rateLimitedInRun: mine.filter((r) => r.status === 429).length,
    maxInAnyWindow: maxInAnySpan(
      counted.map((r) => r.arrivedAt),
      policy.windowSeconds * 1000,
    ),
    maxInAnySecond: maxInAnySpan(times, 1000),
    longestGapMs: longestGap(times, window),
  };
}

/** See {@link TokenFigures.cycleShare}. */
function cycles(
  times: readonly number[],
  policy: { quota: number; windowSeconds: number },
): Pick<TokenFigures, 'cycleShare' | 'bursts' | 'cycleMs'> {
  const sorted = [...times].sort((a, b) => a - b);
  const wMs = policy.windowSeconds * 1000;
  const starts = sorted.flatMap((at, i) => (i === 0 || at - sorted[i - 1]! > wMs / 4 ? [i] : []));
  if (starts.length < 3) return { bursts: starts.length };
  // The first burst may be cut by the window's start: from the second one to the last one's start.
  const from = starts[1]!;
  const to = starts[starts.length - 1]!;
  const elapsed = sorted[to]! - sorted[from]!;
  return {
    bursts: starts.length,
    cycleMs: Math.round(elapsed / (starts.length - 2)),
    cycleShare: round3((to - from) / ((policy.quota * elapsed) / wMs)),
  };
}

/** The longest interval of `window` holding none of `times`. */
export function longestGap(times: readonly number[], window: Window): number {
  const sorted = [...times].sort((a, b) => a - b);
  let longest = 0;
  let last = window.from;
  for (const at of [...sorted, window.to]) {
    longest = Math.max(longest, at - last);
    last = at;
  }
  return Math.round(longest);
}

/** Requests the sandbox counted for `source` in the window (its progress: one create per row). */
export const sourceRequests = (served: readonly ServedResponse[], source: string, window: Window) =>
  served.filter((r) => r.source === source && r.status !== 429 && inWindow(r.arrivedAt, window)).length;

/** The first request the sandbox counted for each file of each source: `source.f<file>` → ms. */
export function firstRequests(served: readonly ServedResponse[]): Map<string, number> {
  const first = new Map<string, number>();
  for (const r of served) {
    if (r.source === undefined || r.status === 429) continue;
    const key = `${r.source}.f${r.file}`;
    const known = first.get(key);
    if (known === undefined || r.arrivedAt < known) first.set(key, r.arrivedAt);
  }
  return first;
}

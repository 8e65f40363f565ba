import type { Redis } from 'ioredis';
import type { Clock } from '../../domain/clock.js';
import { budgetKeys, flowOfTicket } from './redis-keys.js';

/** How one token's budget is used now, as the shared limiter's Redis keys tell it. */
export interface BudgetUse {
  /**
   * Log entries in the policy's window (the last w seconds, Redis clock unless `clock` is given):
   * our requests (restamped to their answers) and other clients' inferred ones; every entry the log
   * holds when no policy is stored.
   */
  requestsInWindow: number;
  /** The policy a server told (`RateLimit-Policy`), undefined until one did (or 24 h after the last). */
  quota: number | undefined;
  windowSeconds: number | undefined;
  /** Requests waiting for the budget, over every process, per flow (most first); lapsed tickets left out. */
  waiting: Array<{ flow: string; requests: number }>;
}

/**
 * Lua, read-only (EVAL_RO): KEYS[1] the log, KEYS[2] the tickets by deadline, KEYS[3] the policy;
 * ARGV[1] now (ms) or '' to read Redis `TIME`, as the limiter's scripts (redis-scripts.ts).
 * Returns {entries in the window, q or '', w or '', tickets whose deadline is still ahead}.
 */
const READ_BUDGET_USE = `
local now = tonumber(ARGV[1])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local policy = redis.call('HMGET', KEYS[3], 'q', 'w')
local w = tonumber(policy[2])
local inWindow
if w then
  inWindow = redis.call('ZCOUNT', KEYS[1], '(' .. (now - math.ceil(w * 1000)), '+inf')
else
  inWindow = redis.call('ZCARD', KEYS[1])
end
local waiting = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. now, '+inf')
return {inWindow, policy[1] or '', policy[2] or '', waiting}
`;

/** How `readBudgetUse` tells the time. */
export interface ReadBudgetUseOptions {
  /**
   * The clock of a limiter built with `timeSource: 'clock'` (tests); default Redis `TIME`, the
   * clock every production limiter admits by.
   */
  clock?: Clock | undefined;
}

/**
 * Reads how budget `key` (a `TokenProvider.budgetKey`) is used, for the dashboard: the requests in
 * the window, the policy, and who waits, per flow. One read-only script: it changes nothing.
 *
 * @example
 * const use = await readBudgetUse(redis, 'receivables-sync', tokens.budgetKey(token));
 * // { requestsInWindow: 287, quota: 300, windowSeconds: 60, waiting: [{ flow: 'erp-csv', requests: 16 }, { flow: 'crm', requests: 2 }] }
 */
export async function readBudgetUse(
  redis: Redis,
  prefix: string,
  key: string,
  options: ReadBudgetUseOptions = {},
): Promise<BudgetUse> {
  const keys = budgetKeys(prefix, key);
  const [inWindow, quota, windowSeconds, tickets] = (await redis.eval_ro(
    READ_BUDGET_USE,
    3,
    keys.log,
    keys.fqDue,
    keys.policy,
    options.clock?.now().getTime() ?? '',
  )) as [number, string, string, string[]];
  const byFlow = new Map<string, number>();
  for (const ticket of tickets) {
    const flow = flowOfTicket(ticket);
    byFlow.set(flow, (byFlow.get(flow) ?? 0) + 1);
  }
  const waiting = [...byFlow]
    .map(([flow, requests]) => ({ flow, requests }))
    .sort((a, b) => b.requests - a.requests || a.flow.localeCompare(b.flow));
  return {
    requestsInWindow: inWindow,
    quota: quota === '' ? undefined : Number(quota),
    windowSeconds: windowSeconds === '' ? undefined : Number(windowSeconds),
    waiting,
  };
}

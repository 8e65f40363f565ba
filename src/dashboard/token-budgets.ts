/**
 * The port of the sync page's quota lines: what the dashboard needs to know of each connection's
 * token budget. The composition root implements it over Redis (app/dashboard-budgets.ts: what the
 * workers publish and the shared limiter keeps); the dashboard never reads Redis keys itself.
 */

/** What the shared limiter tells of one budget now (`readBudgetUse`, api/rate-limit/budget-use.ts). */
export interface BudgetUse {
  /** Requests in the policy's window (every logged one while no policy is known). */
  requestsInWindow: number;
  /** The policy a server told; null until one did. */
  quota: number | null;
  windowSeconds: number | null;
  /** The flows (source ids; '' for requests made outside a source's pass) waiting for it now. */
  waiting: Array<{ flow: string; requests: number }>;
}

/** One connection's budget as a worker told it, with the limiter's figures of that budget. */
export interface ToldBudget {
  /** The organizations its token sees (empty until the worker listed them). */
  organizations: string[];
  /** When a worker last told it. */
  toldAt: Date;
  use: BudgetUse;
}

/**
 * One reading of the token budgets: by connection id, the ones a worker told (`available`), or
 * `available: false` when Redis did not answer in time. Never a rejection: the page renders anyway.
 */
export type TokenBudgetReading =
  | { available: true; byConnection: ReadonlyMap<string, ToldBudget> }
  | { available: false };

/** Reads the budgets of the connections; what `DashboardDeps.tokenBudgets` is. Never rejects. */
export type TokenBudgetReader = () => Promise<TokenBudgetReading>;

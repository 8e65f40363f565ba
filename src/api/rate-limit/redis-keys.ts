/** The Redis keys of one budget (docs/rate-limiting.md, "Shared through Redis"). */
export interface BudgetKeys {
  /** ZSET: admission times (score) by member (a ticket, or a phantom of another client). */
  log: string;
  /** String, PX: pause-until (ms, Redis clock). */
  pause: string;
  /** HASH: the policy the server told (`q`, `w`), `counted`, `probe`. */
  policy: string;
  /** ZSET: the waiting tickets (`${flow}|${process}:${seq}`) by virtual finish tag. */
  fq: string;
  /** ZSET: the waiting tickets by deadline (ms, Redis clock): a ticket not checked again by then lapses. */
  fqDue: string;
  /** HASH: `V` (the virtual time) and `f:${flow}` (each flow's last tag). */
  fqTags: string;
  /** ZSET: admission times (never restamped) of the last span, for the pacing of a saturated budget. */
  pace: string;
}

/** The keys of budget `key` under `prefix`. */
export function budgetKeys(prefix: string, key: string): BudgetKeys {
  const base = `${prefix}:rl:${key}`;
  return {
    log: `${base}:log`,
    pause: `${base}:pause`,
    policy: `${base}:policy`,
    fq: `${base}:fq`,
    fqDue: `${base}:fq-due`,
    fqTags: `${base}:fq-tags`,
    pace: `${base}:pace`,
  };
}

/** The flow id a ticket member carries (`${flow}|${process}:${seq}`; a flow id may hold `|`). */
export function flowOfTicket(ticket: string): string {
  const at = ticket.lastIndexOf('|');
  return at < 0 ? '' : ticket.slice(0, at);
}

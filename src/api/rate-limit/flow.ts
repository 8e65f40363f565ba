import { AsyncLocalStorage } from 'node:async_hooks';
import { AppError } from '../../domain/errors.js';

/**
 * A stream of requests sharing a token's budget with others (one source's pass): the limiter admits
 * the waiters of one budget by weighted fair queuing between flows, so a large backlog of one flow
 * does not hold up a few requests of another (docs/rate-limiting.md, "Fair queuing between sources").
 */
export interface Flow {
  /** The flow's name, e.g. the source id; requests of one id share one fair share. */
  id: string;
  /** Its share relative to the other flows waiting (2 gets twice what 1 gets); finite and > 0. */
  weight: number;
}

/** The flow of requests made outside any `withFlow`: one shared flow of weight 1. */
export const IMPLICIT_FLOW: Flow = Object.freeze({ id: '', weight: 1 });

const current = new AsyncLocalStorage<Flow>();

/**
 * Runs `fn` with `flow` as the current flow: the API client's requests made from it (in any
 * continuation of it) are queued and admitted as that flow's.
 *
 * @example
 * await withFlow({ id: source.id, weight: source.weight ?? 1 }, () => runPass(source));
 */
export function withFlow<T>(flow: Flow, fn: () => Promise<T>): Promise<T> {
  return current.run(checkedFlow(flow), fn);
}

/** The flow set by the innermost `withFlow` around the caller, if any. */
export function currentFlow(): Flow | undefined {
  return current.getStore();
}

/** `flow` (checked), else the current flow, else the implicit one. */
export function flowOrCurrent(flow?: Flow): Flow {
  return flow ? checkedFlow(flow) : (current.getStore() ?? IMPLICIT_FLOW);
}

/** A copy of `flow`, refused when its weight cannot divide a share (0, negative, NaN, Infinity). */
export function checkedFlow(flow: Flow): Flow {
  if (!Number.isFinite(flow.weight) || flow.weight <= 0) {
    throw new AppError('FLOW_WEIGHT_INVALID', `flow "${flow.id}" has weight ${flow.weight}; it must be > 0`);
  }
  return { id: flow.id, weight: flow.weight };
}

/**
 * Virtual finish tags of weighted fair queuing, for one budget key: a request of flow f gets
 * tag = max(V, last[f]) + 1/weight(f), waiters are admitted in tag order, and an admission moves V up
 * to its tag. Busy flows then share admissions in proportion to their weights, and a flow that
 * was idle starts at V: its first request is about one admission away whatever the others' backlog.
 * The Redis limiter does the same in Lua (redis-scripts.ts).
 */
export class FinishTags {
  #virtual = 0;
  readonly #last = new Map<string, number>();

  /** The tag of a new request of `flow`. */
  issue(flow: Flow): number {
    const tag = Math.max(this.#virtual, this.#last.get(flow.id) ?? 0) + 1 / flow.weight;
    this.#last.set(flow.id, tag);
    return tag;
  }

  /** A request tagged `tag` was admitted. */
  admitted(tag: number): void {
    this.#virtual = Math.max(this.#virtual, tag);
    // A flow whose last tag is behind V starts from V anyway: forget it (bounds the map).
    for (const [id, last] of this.#last) if (last <= this.#virtual) this.#last.delete(id);
  }

  /** Nobody waits any more: the next busy period starts from scratch (keeps the tags small). */
  reset(): void {
    this.#virtual = 0;
    this.#last.clear();
  }
}

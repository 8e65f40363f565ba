import PQueue from 'p-queue';
import type { Flow } from './rate-limit/flow.js';

/**
 * Bounds the HTTP requests in flight, one p-queue per flow (each with the configured concurrency):
 * a p-queue is first-come, so with one queue for everyone a flow's backlog would sit ahead of a
 * small flow's requests in the process before ever reaching the rate limiter, which is where the
 * flows are ordered fairly. A flow's queue is dropped once idle.
 *
 * @example
 * const queues = new FlowQueues(8);
 * await queues.add(flow, () => attempt());
 * await queues.onIdle(); // on shutdown
 */
export class FlowQueues {
  readonly #concurrency: number;
  readonly #queues = new Map<string, PQueue>();

  constructor(concurrency: number) {
    this.#concurrency = concurrency;
  }

  /** Runs `task` once fewer than `concurrency` tasks of `flow` run. */
  add<T>(flow: Flow, task: () => Promise<T>): Promise<T> {
    let queue = this.#queues.get(flow.id);
    if (!queue) {
      const created = new PQueue({ concurrency: this.#concurrency });
      created.addEventListener('idle', () => {
        if (this.#queues.get(flow.id) === created && created.size === 0 && created.pending === 0)
          this.#queues.delete(flow.id);
      });
      this.#queues.set(flow.id, created);
      queue = created;
    }
    return queue.add(task);
  }

  /** The flows with a queue now (tests, diagnostics). */
  get flows(): string[] {
    return [...this.#queues.keys()];
  }

  /** Resolves once no task of any flow is queued or running, queues created meanwhile included. */
  async onIdle(): Promise<void> {
    for (;;) {
      const busy = [...this.#queues.values()].filter((queue) => queue.size > 0 || queue.pending > 0);
      if (busy.length === 0) return;
      await Promise.all(busy.map((queue) => queue.onIdle()));
    }
  }
}

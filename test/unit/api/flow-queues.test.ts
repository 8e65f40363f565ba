import { describe, expect, it } from 'vitest';
import { FlowQueues } from '../../../src/api/flow-queues.js';

const backlog = { id: 'backlog', weight: 1 };
const small = { id: 'small', weight: 1 };

/** A task that runs until `release()` is called. */
function held() {
  let release!: () => void;
  const done = new Promise<void>((resolve) => (release = resolve));
  return { task: () => done, release };
}

describe('FlowQueues', () => {
  it("when a flow has a backlog of queued tasks, then another flow's task runs at once, and each flow has its own concurrency", async () => {
    const queues = new FlowQueues(2);
    const gate = held();
    let running = 0;
    const backlogTasks = Array.from({ length: 10 }, () =>
      queues.add(backlog, async () => {
        running++;
        await gate.task();
      }),
    );
    const order: string[] = [];
    const smallTasks = [1, 2, 3].map((i) => queues.add(small, async () => order.push(`small ${i}`)));
    await Promise.all(smallTasks);
    expect(order).toEqual(['small 1', 'small 2', 'small 3']);
    expect(running).toBe(2);
    gate.release();
    await Promise.all(backlogTasks);
    expect(running).toBe(10);
  });

  it('when a flow has nothing left to run, then its queue is dropped; onIdle waits for every flow, queues created meanwhile included', async () => {
    const queues = new FlowQueues(1);
    const first = held();
    const second = held();
    let finished = 0;
    void queues.add(backlog, first.task).then(() => finished++);
    let idle = false;
    const waiting = queues.onIdle().then(() => (idle = true));
    void queues.add(small, second.task).then(() => finished++);
    expect(queues.flows.sort()).toEqual(['backlog', 'small']);
    first.release();
    await new Promise((resolve) => setImmediate(resolve));
    expect(idle).toBe(false);
    expect(queues.flows).toEqual(['small']);
    second.release();
    await waiting;
    expect(finished).toBe(2);
    expect(queues.flows).toEqual([]);
  });
});

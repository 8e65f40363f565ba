/**
 * A loaded host for the benchmarks: one busy-loop child process per core, running beside the
 * measured processes until `stop()` (or until this process exits).
 *
 * @example
 * const hog = startCpuHogs();
 * try { await measure(); } finally { hog.stop(); }
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';

export interface CpuHog {
  /** How many busy-loop processes run. */
  readonly processes: number;
  stop(): void;
}

export function startCpuHogs(count = availableParallelism()): CpuHog {
  const children: ChildProcess[] = [];
  for (let i = 0; i < count; i++) {
    children.push(spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
  }
  const stop = () => {
    for (const child of children)
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  process.once('exit', stop);
  return { processes: count, stop };
}

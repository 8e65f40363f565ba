import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { BIN } from './cli.js';

/** mulberry32: a small seeded generator, so a failing run (or a fault draw) replays with its seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Runs the built CLI with `args` again and again, SIGKILLing each run after a random delay
 * (`minMs` + up to `spreadMs`, from `next`), until `kills` kills landed in a running process (at
 * most `kills` × 4 runs). A run that finished before its kill was due calls `onFinished` (drop a new
 * version of the data: it left nothing to do).
 */
export async function killRounds(props: {
  args: readonly string[];
  env: NodeJS.ProcessEnv;
  kills: number;
  next: () => number;
  minMs: number;
  spreadMs: number;
  onFinished: () => void;
}): Promise<{ killed: number; rounds: number }> {
  let killed = 0;
  let rounds = 0;
  for (; killed < props.kills && rounds < props.kills * 4; rounds++) {
    const child = spawn(process.execPath, [BIN, ...props.args], {
      env: { ...process.env, ...props.env },
      stdio: 'ignore',
    });
    const exited = once(child, 'exit');
    const delayMs = props.minMs + Math.floor(props.next() * props.spreadMs);
    const outcome = await Promise.race([
      exited.then(() => 'exited' as const),
      new Promise<'due'>((resolve) => setTimeout(() => resolve('due'), delayMs)),
    ]);
    if (outcome === 'due') {
      child.kill('SIGKILL');
      killed++;
    }
    await exited;
    if (outcome === 'exited') props.onFinished();
  }
  return { killed, rounds };
}

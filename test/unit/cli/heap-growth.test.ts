import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  heapGrowthGiven,
  YOUNG_GENERATION_CAP_MB,
  youngGenerationGiven,
} from '../../../src/cli/heap-growth.js';

describe('heapGrowthGiven', () => {
  it('when node was started with its own heap growth, then the CLI keeps it', () => {
    expect(heapGrowthGiven(['--heap-growing-percent=20'])).toBe(true);
    expect(heapGrowthGiven(['--max-old-space-size=512', '--heap_growing_percent=80'])).toBe(true);
    expect(heapGrowthGiven(['--heap-growing-percent'])).toBe(true);
  });

  it('when nothing or other flags were given, then the CLI sets its own', () => {
    expect(heapGrowthGiven([])).toBe(false);
    expect(heapGrowthGiven(['--enable-source-maps', '--max-old-space-size=512'])).toBe(false);
    expect(heapGrowthGiven(['--heap-growing-percentage=5'])).toBe(false);
  });
});

describe('youngGenerationGiven', () => {
  it('when node was given its own young generation, on its command line or in NODE_OPTIONS, then the CLI keeps it', () => {
    expect(youngGenerationGiven(['--max-semi-space-size=16'])).toBe(true);
    expect(youngGenerationGiven(['--min_semi_space_size=2'])).toBe(true);
    expect(youngGenerationGiven(['--semi-space-growth-factor=2'])).toBe(true);
    expect(youngGenerationGiven([], '--require ./x.cjs --max-semi-space-size=8')).toBe(true);
  });

  it('when nothing or other flags were given, then the CLI caps it', () => {
    expect(youngGenerationGiven([], '')).toBe(false);
    expect(youngGenerationGiven(['--max-old-space-size=512'], '--require ./x.cjs')).toBe(false);
  });
});

/**
 * A process that allocates 400 MB in objects that live a while (the last 100,000 kept), with a turn
 * of the event loop every 20,000, as a pass does; prints its young generation's size in MB.
 */
const ALLOCATE = `
  import v8 from 'node:v8';
  if (process.env.CAP) (await import(process.env.CAP)).capYoungGeneration([], '');
  let kept = [];
  for (let round = 0; round < 100; round++) {
    for (let i = 0; i < 20_000; i++) {
      kept.push({ id: i, name: 'record ' + i });
      if (kept.length > 100_000) kept = kept.slice(50_000);
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  const young = v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space');
  console.log(young.space_size / 1024 / 1024);
`;

function youngGenerationMb(cap: boolean): number {
  const module = pathToFileURL(join(import.meta.dirname, '..', '..', '..', 'src', 'cli', 'heap-growth.ts'));
  const child = spawnSync(
    process.execPath,
    ['--import', import.meta.resolve('tsx'), '--input-type=module', '-e', ALLOCATE],
    { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '', CAP: cap ? module.href : '' } },
  );
  if (child.status !== 0) throw new Error(child.stderr);
  return Number(child.stdout.trim());
}

describe('capYoungGeneration', () => {
  it('when a process allocates for a while, then its young generation stays within one growth step of the cap where V8 would grow it to its maximum', () => {
    // V8 reads its growth factor at each resize: if this fails, a Node upgrade changed that, and
    // the CLI's young generation grows to V8's maximum again (docs/performance.md). The cap reacts
    // after collections, so a collection that comes before the observer runs can still double it
    // once: 8 MB in most runs, up to 16 MB on a loaded machine (30 runs beside three busy loops).
    expect(youngGenerationMb(true)).toBeLessThanOrEqual(YOUNG_GENERATION_CAP_MB * 2);
    expect(youngGenerationMb(false)).toBeGreaterThan(YOUNG_GENERATION_CAP_MB * 4);
  });
});

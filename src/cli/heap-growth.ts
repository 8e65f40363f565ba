import { PerformanceObserver } from 'node:perf_hooks';
import v8 from 'node:v8';
import { nodeOptions } from '../config/node-options.js';

/**
 * How far V8 lets the old generation grow past what survived the last full garbage collection, in
 * percent (V8's `--heap-growing-percent`). V8's own factor goes up to 4× on a heap that is small
 * next to its limit (4 GB here): a first sync of 3,000 records, whose live heap stays near 64 MB,
 * let 229 MB of garbage pile up before a full collection and peaked at 531–553 MB RSS; with 50 %
 * it peaked at 388–396 MB, for the same CPU time within the machine's noise (3 runs each,
 * alternated; docs/performance.md). The CSV source on a million rows was unchanged (its heap is
 * bounded otherwise).
 */
export const HEAP_GROWING_PERCENT = 50;

const FLAG = /^--heap[-_]growing[-_]percent(=|$)/;

/**
 * Whether node was started with its own `--heap-growing-percent` (`node --heap-growing-percent=N
 * bin/receivables-sync.js ...`; Node refuses V8 flags like it in NODE_OPTIONS).
 */
export function heapGrowthGiven(execArgv: readonly string[]): boolean {
  return execArgv.some((arg) => FLAG.test(arg));
}

/**
 * Sets `HEAP_GROWING_PERCENT` unless the process was given its own. V8 reads the flag at each full
 * collection, so setting it at start is enough (unlike the sizes of the heap's spaces, fixed when
 * the process starts). Returns whether it was set.
 */
export function limitHeapGrowth(execArgv: readonly string[] = process.execArgv): boolean {
  if (heapGrowthGiven(execArgv)) return false;
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  return true;
}

/**
 * The size of the young generation (two semi-spaces) past which the CLI stops V8 growing it, in MB.
 * V8 starts it at 1 MB and doubles it as objects survive, up to 128 MB here, and a long pass gets
 * there whatever its live heap: a first sync of 10,500 records peaked at 388–400 MB RSS, 117–127 MB
 * of it the young generation; with 8 MB, 269 MB. A smaller young generation promotes more objects
 * that would have died young: the CSV source on a million rows ran 3–10 % slower with 8 MB, 14 %
 * with 4 MB, and a first sync took 257 MB with 4 MB (docs/performance.md, 2026-11-25).
 */
export const YOUNG_GENERATION_CAP_MB = 8;

/** V8's own growth factor of the young generation (`node --v8-options`). */
const V8_SEMI_SPACE_GROWTH_FACTOR = 2;

const YOUNG_FLAG = /^--(?:(?:max|min)[-_]semi[-_]space[-_]size|semi[-_]space[-_]growth[-_]factor)(=|$)/;

/**
 * Whether node was given its own young generation size or growth, on its command line or in
 * NODE_OPTIONS (which accepts `--max-semi-space-size`).
 */
export function youngGenerationGiven(execArgv: readonly string[], nodeOptions = ''): boolean {
  return [...execArgv, ...nodeOptions.split(/\s+/)].some((arg) => YOUNG_FLAG.test(arg));
}

/**
 * Keeps the young generation at `capMb`, unless node was given its own size. V8 fixes the young
 * generation's maximum when the process starts (`--max-semi-space-size` set later is ignored), but
 * reads its growth factor each time it resizes it: the factor is 1 (no growth) from here on, and
 * after each collection V8's own while the young generation is below the cap. Collections are
 * reported between two turns of the event loop, so a long synchronous stretch (loading the
 * commands' modules) runs without growth rather than past the cap; a collection that comes before
 * the observer has run can still double it once (up to 2 × `capMb`). The observer does not keep the
 * process alive. Returns it, or null when node was given its own size.
 */
export function capYoungGeneration(
  execArgv: readonly string[] = process.execArgv,
  givenOptions = nodeOptions(),
  capMb = YOUNG_GENERATION_CAP_MB,
): PerformanceObserver | null {
  if (youngGenerationGiven(execArgv, givenOptions)) return null;
  const cap = capMb * 1024 * 1024;
  const setGrowth = (grow: boolean) =>
    v8.setFlagsFromString(`--semi-space-growth-factor=${grow ? V8_SEMI_SPACE_GROWTH_FACTOR : 1}`);
  let growing = false;
  setGrowth(growing);
  const observer = new PerformanceObserver(() => {
    const young = v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space');
    const grow = young !== undefined && young.space_size < cap;
    if (grow === growing) return;
    growing = grow;
    setGrowth(growing);
  });
  observer.observe({ entryTypes: ['gc'] });
  return observer;
}

import v8 from 'node:v8';

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

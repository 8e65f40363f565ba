import { describe, expect, it } from 'vitest';
import { heapGrowthGiven } from '../../../src/cli/heap-growth.js';

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

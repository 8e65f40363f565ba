import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Vitest's default on a 2-core machine is one file at a time (CPUs - 1); the e2e and integration
    // files spend most of their time waiting on the processes, servers and databases they start, so
    // two at once halve the wall time of `npm test` (CI's budget is 15 minutes).
    maxWorkers: 2,
    // The CLI processes the tests start (several hundred) load their modules from Node's compile
    // cache (docs/performance.md: a user's choice, left off by the CLI for its peak RSS): 7-8 % off
    // the CLI test files' time (cli-conventions + cli-output: 42.0 / 38.0 s without, 38.5 / 35.6 s with).
    env: { NODE_COMPILE_CACHE: join(tmpdir(), 'receivables-sync-test-compile-cache') },
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      {
        extends: true,
        test: { name: 'integration', include: ['test/integration/**/*.test.ts'], testTimeout: 60_000 },
      },
      { extends: true, test: { name: 'e2e', include: ['test/e2e/**/*.test.ts'], testTimeout: 120_000 } },
    ],
  },
});

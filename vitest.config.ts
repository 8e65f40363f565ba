import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Vitest's default on a 2-core machine is one file at a time (CPUs - 1); the e2e and integration
    // files spend most of their time waiting on the processes, servers and databases they start (two
    // files at a time used 1.26 of the 2 cores). Measured on the 2-core machine (docs/performance.md):
    // 2 workers 389 s, 3 workers 337 s, 4 workers 280-312 s with the projects below not isolated.
    // 5 workers: 292 s and more CPU (contention), so 4. A fixed number, not a share of the CPUs: more
    // files at once would also mean more Postgres connections, Redis clients and CLI processes on a
    // larger machine than the services expect. `VITEST_MAX_WORKERS=N` overrides it (vitest's
    // `--maxWorkers` flag does not reach the projects in vitest 4.1: vitest#11051).
    maxWorkers: 4,
    // The CLI processes the tests start (several hundred) load their modules from Node's compile
    // cache (docs/performance.md: a user's choice, left off by the CLI for its peak RSS): 7-8 % off
    // the CLI test files' time (cli-conventions + cli-output: 42.0 / 38.0 s without, 38.5 / 35.6 s with).
    env: { NODE_COMPILE_CACHE: join(tmpdir(), 'receivables-sync-test-compile-cache') },
    // The unit and integration files share their worker's module cache (`isolate: false`): each file
    // owns its schema, Redis prefix and temporary folders and sets no global state, so a fresh module
    // graph per file only cost its import (integration alone: 128 s isolated, 99 s shared; unit 13 s
    // and 7 s). The e2e files stay isolated: 38 files whose time is the processes they start.
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'], isolate: false } },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          testTimeout: 60_000,
          isolate: false,
        },
      },
      { extends: true, test: { name: 'e2e', include: ['test/e2e/**/*.test.ts'], testTimeout: 120_000 } },
    ],
  },
});

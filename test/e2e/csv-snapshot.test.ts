import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { ACCOUNT_HEADER, accountRow, dropCsv, range } from '../support/drop-data.js';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.js';
import { lastJsonLine, type StateKind, type SyncEnv, syncEnv } from '../support/sync-env.js';

/** `streams` of the env's CSV source (indented under it). */
const SNAPSHOT_YAML = '    streams:\n      accounts:\n        mode: snapshot\n';

describe.each(['postgres', 'embedded'] as const)(
  'sync --once of a CSV source in snapshot mode, %s state DB',
  (state: StateKind) => {
    let sandbox: TestSandbox;
    let env: SyncEnv;
    const sync = (...args: string[]) =>
      runCli(['--config', env.configFile, 'sync', '--once', ...args], { env: env.env });
    /** The account the service holds for `C-<i>`, linked or not (found by name). */
    const account = async (i: number) => {
      const { body } = await sandbox.call('GET', '/accounts', {
        query: { organizationId: sandbox.organizationId },
      });
      return (body.nodes as Array<{ fullName: string; source: { sourceId: string } | null }>).find(
        (a) => a.fullName === `Customer ${i}`,
      );
    };

    beforeAll(async () => {
      sandbox = await startTestSandbox();
      env = syncEnv(sandbox, state, SNAPSHOT_YAML);
    });
    afterAll(async () => {
      await env?.cleanup();
      await sandbox?.close();
    });

    it('when a row is removed from the next file, then --dry-run plans the unlink, and the pass makes it', async () => {
      dropCsv(
        env.dropDir,
        'accounts-1.csv',
        ACCOUNT_HEADER,
        range(1, 20).map((i) => accountRow(i)),
      );
      const first = await sync('--json');
      expect(first.code, first.stderr).toBe(0);
      expect(lastJsonLine(first.stdout).accounts).toMatchObject({ created: 20 });

      dropCsv(
        env.dropDir,
        'accounts-2.csv',
        ACCOUNT_HEADER,
        range(1, 20)
          .filter((i) => i !== 7)
          .map((i) => accountRow(i)),
      );
      const dry = await sync('--dry-run');
      expect(dry.code, dry.stderr).toBe(0);
      expect(dry.stdout).toMatch(/unlink source\s+account\s+C-7/);
      expect(dry.stdout).toContain('snapshot mode: 1 account absent from this file would be unlinked: C-7');
      expect((await account(7))?.source).toMatchObject({ sourceId: 'C-7' });

      const real = await sync();
      expect(real.code, real.stderr).toBe(0);
      expect(real.stdout).toContain(
        'accounts-2.csv: warning: snapshot mode: 1 account absent from this file was unlinked: C-7',
      );
      expect((await account(7))?.source).toBeNull();
      expect((await account(8))?.source).toMatchObject({ sourceId: 'C-8' });
    });

    it('when half the rows are missing, then the summary says the deletions are held and nothing is unlinked', async () => {
      dropCsv(
        env.dropDir,
        'accounts-3.csv',
        ACCOUNT_HEADER,
        range(1, 10)
          .filter((i) => i !== 7)
          .map((i) => accountRow(i)),
      );
      const result = await sync('--json');
      expect(result.code, result.stderr).toBe(0);
      // With --json the readable report goes to stderr, and the JSON line names the held deletions.
      expect(result.stderr).toContain('10 accounts (52.6 % of the 19 linked) are absent from this file');
      expect(result.stderr).toContain('the deletions are held and none was unlinked');
      expect(lastJsonLine(result.stdout).snapshots).toEqual([
        expect.objectContaining({
          unit: 'accounts-3.csv',
          stream: 'accounts',
          action: 'held',
          linked: 19,
          absent: 10,
          applied: 0,
          sample: ['C-11', 'C-12', 'C-13', 'C-14', 'C-15', 'C-16', 'C-17', 'C-18', 'C-19', 'C-20'],
        }),
      ]);
      for (const i of [11, 15, 20]) expect((await account(i))?.source).toMatchObject({ sourceId: `C-${i}` });
    });
  },
);

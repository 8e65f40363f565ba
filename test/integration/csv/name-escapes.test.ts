import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { jsonSummary, textSummary } from '../../../src/cli/sync-summary.js';
import { prettyLine } from '../../../src/logging/pretty-line.js';
import { printable } from '../../../src/logging/printable-text.js';
import { type DropWorld, dropWorld, INVOICES_NO_DUE_DATE } from '../../support/csv-drop-pass.js';

/**
 * A file name may hold any byte but `/` and NUL: a line break would forge a line of the reason
 * file or of the summary, an ESC sequence would drive the terminal that prints it. Wherever the
 * name is written for a person, it is one line, its control characters escaped.
 */

let world: DropWorld;
beforeEach(async () => {
  world = await dropWorld();
});
afterEach(() => world.cleanup());

const NAME = 'invoices\n\u001b[2J\u001b]0;pwned\u0007forged: line.csv';
const ESCAPED = 'invoices\\n\\x1b[2J\\x1b]0;pwned\\x07forged: line.csv';

describe('a dropped file named with a line break and terminal escapes', () => {
  it('when it is rejected, then its reason file, its summary line and its log line show it escaped, on one line', async () => {
    await world.drop(NAME, INVOICES_NO_DUE_DATE);

    const summary = await world.pass();

    // On disk the file keeps its name; what is written about it is escaped.
    expect(await readdir(join(world.dir, 'rejected'))).toEqual([NAME, `${NAME}.reason.txt`]);
    const reason = await readFile(join(world.dir, 'rejected', `${NAME}.reason.txt`), 'utf8');
    const lines = reason.split('\n');
    expect(lines.filter((line) => line.startsWith('file: '))).toEqual([`file: ${ESCAPED}`]);
    expect(lines.some((line) => line.startsWith('forged'))).toBe(false);
    expect(reason).not.toContain('\u001b');

    const text = textSummary([summary], jsonSummary([summary], { requests: 0, rateLimited: 0 }, 1), false);
    expect(text).toContain(
      `  erp-csv: ${ESCAPED} could not be read: missing required column "dueDate" in the header row\n`,
    );
    // Nothing left for `printable` to escape on any line: no raw control character.
    for (const line of text.split('\n')) expect(printable(line)).toBe(line);

    const logged = world.logLines.find((line) => line.msg === 'file rejected');
    expect(logged?.file).toBe(NAME);
    const pretty = prettyLine(logged!);
    expect(pretty).toContain(`${ESCAPED}: missing required column`);
    expect(printable(pretty)).toBe(pretty);
  });

  it('when the reason quotes a header cell holding a line break, then it stays on the first line of the reason file', async () => {
    const strict = await dropWorld({ strictColumns: true });
    try {
      await strict.drop(
        'accounts.csv',
        'sourceId,fullName,currencyCode,"note\nforged: line"\nACC-1,Atelier,EUR,x\n',
      );
      const summary = await strict.pass();
      expect(summary.abandoned[0]?.reason).toContain('"note\nforged: line"');
      const reason = await readFile(join(strict.dir, 'rejected', 'accounts.csv.reason.txt'), 'utf8');
      expect(reason.split('\n')[0]).toContain('"note\\nforged: line"');
      expect(reason.split('\n').some((line) => line.startsWith('forged'))).toBe(false);
    } finally {
      await strict.cleanup();
    }
  });
});

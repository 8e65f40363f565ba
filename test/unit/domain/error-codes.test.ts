import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ApiResponseError } from '../../../src/api/errors.js';
import { CliError } from '../../../src/cli/errors.js';
import { ERROR_CODES, type ErrorCode } from '../../../src/domain/error-codes.js';
import { AppError } from '../../../src/domain/errors.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const DOC = join(ROOT, 'docs/error-codes.md');
const CATALOGUE = join(ROOT, 'src/domain/error-codes.ts');
/** An independent implementation of the API's spec, with the server's own codes. */
const SANDBOX = join(ROOT, 'src/sandbox');

/** The rows of the doc's tables whose first cell is a code: code | kind | retryable | what to do. */
function documentedRows(): string[][] {
  return readFileSync(DOC, 'utf8')
    .split('\n')
    .filter((line) => /^\|\s*`[A-Z][A-Z0-9_]*`\s*\|/.test(line))
    .map((line) =>
      line
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim()),
    );
}

const catalogueRows = (): string[][] =>
  Object.entries(ERROR_CODES).map(([code, entry]) => [
    `\`${code}\``,
    entry.kind,
    entry.retryable ? 'yes' : 'no',
    entry.fix,
  ]);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return path === SANDBOX ? [] : sourceFiles(path);
    return entry.name.endsWith('.ts') && path !== CATALOGUE ? [path] : [];
  });
}

describe('the catalogue of error codes', () => {
  it('when docs/error-codes.md is read, then it lists every code of the catalogue, in its order, with its kind, retryability and fix', () => {
    // On a difference, the expected rows are printed: paste them into the doc.
    expect(documentedRows().map((row) => `| ${row.join(' | ')} |`)).toEqual(
      catalogueRows().map((row) => `| ${row.join(' | ')} |`),
    );
  });

  it('when src/ is searched, then every code of the catalogue is used somewhere (no dead entry)', () => {
    const code = sourceFiles(join(ROOT, 'src'))
      .map((file) => readFileSync(file, 'utf8'))
      .join('\n');
    const unused = Object.keys(ERROR_CODES).filter((name) => !code.includes(`'${name}'`));
    expect(unused).toEqual([]);
  });

  it('when a fix is read, then it is one sentence a table cell can hold', () => {
    for (const [code, entry] of Object.entries(ERROR_CODES)) {
      expect.soft(entry.fix, code).toMatch(/^[A-Z].*\.$/);
      expect.soft(entry.fix, code).not.toContain('|');
      expect.soft(entry.fix, code).not.toContain('\n');
    }
  });

  it('when an error is built from a code, then its kind and retryability are the catalogue entry of that code', () => {
    for (const code of Object.keys(ERROR_CODES) as ErrorCode[]) {
      const error = new AppError(code, 'message');
      expect({ code: error.code, kind: error.kind, retryable: error.retryable }).toEqual({
        code,
        kind: ERROR_CODES[code].kind,
        retryable: ERROR_CODES[code].retryable,
      });
    }
  });

  it('when a case decides the retryability, then the override wins over the catalogue', () => {
    expect(new AppError('ALERT_DELIVERY_FAILED', 'answered 404', { retryable: false }).retryable).toBe(false);
    expect(new AppError('SYNC_RECORD_FAILED', 'answered 503', { retryable: true }).retryable).toBe(true);
  });

  it('when a code is not in the catalogue, then it does not compile; the API answer and a restatement keep theirs', () => {
    // Checked by the typecheck (`tsc`), never run.
    // @ts-expect-error: not a code of the catalogue.
    const typo = () => new AppError('TYPO_CODE', 'message');
    expect(typo).toBeTypeOf('function');
    const refused = new ApiResponseError({
      status: 400,
      method: 'POST',
      path: '/invoices',
      apiCode: 'app-invoicing.invoice.duplicate-source-id',
    });
    expect(refused).toMatchObject({
      code: 'app-invoicing.invoice.duplicate-source-id',
      kind: 'data',
      retryable: false,
    });
    const restated = new AppError(refused, 'restated', { cause: refused });
    expect(restated).toMatchObject({
      code: refused.code,
      kind: 'data',
      retryable: false,
      message: 'restated',
    });
    expect(CliError.restating(refused)).toMatchObject({ code: refused.code, kind: 'data' });
  });
});

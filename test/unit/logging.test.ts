import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logging/logger.js';
import { prettyLine } from '../../src/logging/pretty-line.js';

describe('logger redaction', () => {
  it('when secrets are logged under any known field, then none reaches the output', () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const log = createLogger({ level: 'info', destination });
    log.info(
      {
        headers: { authorization: 'Bearer SECRET-1' },
        accessToken: 'SECRET-2',
        refresh_token: 'SECRET-3',
        grant: { codeVerifier: 'SECRET-4', authorizationCode: 'SECRET-5', client_secret: 'SECRET-6' },
        password: 'SECRET-7',
        count: 3,
      },
      'token refreshed',
    );
    const output = lines.join('');
    expect(output).not.toMatch(/SECRET-\d/);
    expect(output).toContain('"count":3');
    expect(output).toContain('[redacted]');
  });

  it('when more streams are given (the run log), then each gets every line, redacted, and the main one keeps its level', () => {
    const sink = () => {
      const lines: string[] = [];
      const stream = new Writable({
        write(chunk, _enc, done) {
          lines.push(String(chunk));
          done();
        },
      });
      return { lines, stream };
    };
    const main = sink();
    const extra = sink();
    const log = createLogger({ level: 'info', destination: main.stream, also: [extra.stream] });
    log.info({ runId: '7', token: 'SECRET-8' }, 'pass started');
    log.debug('not at this level');
    expect(main.lines).toHaveLength(1);
    expect(extra.lines).toHaveLength(1);
    expect(JSON.parse(extra.lines[0]!)).toMatchObject({
      runId: '7',
      msg: 'pass started',
      token: '[redacted]',
    });
  });
});

/** A destination keeping what it is given; `isTTY` makes it look like a terminal. */
function sink(options: { isTTY?: boolean } = {}) {
  const lines: string[] = [];
  const stream = Object.assign(
    new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    }),
    options.isTTY ? { isTTY: true } : {},
  );
  return { lines, stream, text: () => lines.join('') };
}

describe('readable log lines', () => {
  const at = new Date(2026, 10, 24, 12, 3, 4).getTime();

  it('when a record failed, then its line names the record, where it came from, the reason and the API code', () => {
    expect(
      prettyLine({
        level: 40,
        time: at,
        app: 'receivables-sync',
        sourceId: 'erp-csv',
        runId: '7',
        kind: 'invoice',
        sourceKey: 'INV-7',
        file: 'invoices.csv',
        line: 3,
        column: 'accountSourceId',
        stage: 'write',
        status: 400,
        apiCode: 'app-invoicing.document.managed-action-forbidden',
        reason: 'this document is managed by Pennylane',
        msg: 'record failed',
      }),
    ).toBe(
      '12:03:04 WARN  record failed  invoice INV-7 (invoices.csv line 3, accountSourceId): ' +
        'this document is managed by Pennylane [app-invoicing.document.managed-action-forbidden]',
    );
  });

  it('when a line has other fields, then they follow as name=value, an error gives its message, nulls and repeats are left out', () => {
    expect(
      prettyLine({
        level: 50,
        time: at,
        msg: 'unknown column paidAmout',
        file: 'invoices.csv',
        warning: 'unknown column paidAmout',
        err: { type: 'Error', message: 'connection refused', stack: 'Error: …' },
        attempt: 2,
        apiCode: null,
        path: '/api/public/v1/accounts',
        note: 'two words',
      }),
    ).toBe(
      '12:03:04 ERROR unknown column paidAmout  invoices.csv: connection refused  attempt=2 path=/api/public/v1/accounts note="two words"',
    );
    expect(prettyLine({ level: 30, time: at, msg: 'request failed, retrying', status: 503 })).toBe(
      '12:03:04 INFO  request failed, retrying  [HTTP 503]',
    );
  });

  it('when the format is pretty, then the destination gets readable lines, secrets redacted, and no JSON', () => {
    const out = sink();
    const log = createLogger({ level: 'info', format: 'pretty', destination: out.stream });
    log.warn({ kind: 'account', sourceKey: 'C-1', reason: 'refused', token: 'SECRET-9' }, 'record failed');
    expect(out.lines).toHaveLength(1);
    expect(out.text()).toMatch(
      /^\d\d:\d\d:\d\d WARN {2}record failed {2}account C-1: refused {2}token=\[redacted\]\n$/,
    );
    expect(out.text()).not.toContain('SECRET-9');
  });

  it('when the format is auto, then a terminal gets readable lines and anything else JSON', () => {
    const terminal = sink({ isTTY: true });
    createLogger({ level: 'info', destination: terminal.stream, color: false }).warn('on a terminal');
    // Each line first erases the progress line the cursor may be on.
    expect(terminal.text().startsWith('\r\x1b[2K')).toBe(true);
    expect(terminal.text().slice(5)).toMatch(/^\d\d:\d\d:\d\d WARN {2}on a terminal\n$/);
    const file = sink();
    createLogger({ level: 'info', destination: file.stream }).warn('in a file');
    expect(JSON.parse(file.text())).toMatchObject({ level: 40, msg: 'in a file' });
  });

  // FORCE_COLOR decides colours for every stream (Node's convention): these expectations need it unset.
  it.skipIf(process.env.FORCE_COLOR !== undefined)(
    'when the destination is a terminal, then the level of a warning is yellow and of an error red; color: false, a file or the run log get no colour',
    () => {
      const terminal = sink({ isTTY: true });
      const runLog = sink();
      const log = createLogger({ level: 'info', destination: terminal.stream, also: [runLog.stream] });
      log.info('unit done');
      log.warn('record failed');
      log.error('pass failed');
      const [info, warn, error] = terminal.lines.map((line) => line.slice(5));
      expect(info).toMatch(/^\d\d:\d\d:\d\d INFO {2}unit done\n$/);
      expect(warn!.slice(8)).toBe(' \x1b[33mWARN\x1b[39m  record failed\n');
      expect(error!.slice(8)).toBe(' \x1b[31mERROR\x1b[39m pass failed\n');
      expect(runLog.text()).not.toContain('\x1b[');
      const plain = sink({ isTTY: true });
      createLogger({ level: 'info', destination: plain.stream, color: false }).warn('record failed');
      expect(plain.text().slice(5)).toMatch(/^\d\d:\d\d:\d\d WARN {2}record failed\n$/);
      const file = sink();
      createLogger({ level: 'info', format: 'pretty', destination: file.stream }).warn('record failed');
      expect(file.text()).not.toContain('\x1b[');
    },
  );

  it('when no level is set, then a pretty destination shows only warnings and errors, and the run log still gets info as JSON', () => {
    const screen = sink({ isTTY: true });
    const runLog = sink();
    const log = createLogger({ destination: screen.stream, also: [runLog.stream], color: false });
    log.info('unit done');
    log.warn('record failed');
    expect(screen.lines).toHaveLength(1);
    expect(screen.text()).toContain('WARN  record failed');
    expect(runLog.lines.map((l) => JSON.parse(l).msg)).toEqual(['unit done', 'record failed']);
    // With JSON on the main destination, no level set still means info.
    const json = sink();
    createLogger({ format: 'json', destination: json.stream }).info('unit done');
    expect(json.lines).toHaveLength(1);
  });
});

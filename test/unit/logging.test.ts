import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logging/logger.js';

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

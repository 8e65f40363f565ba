import { describe, expect, it } from 'vitest';
import { escapeMrkdwn, slackBody, webhookBody } from '../../../src/alerts/bodies.js';
import {
  newFailuresEvent,
  runFailedEvent,
  sourcePausedEvent,
  throttleOf,
  tokenExpiringEvent,
} from '../../../src/alerts/events.js';
import { ManualClock } from '../../../src/domain/clock.js';
import { AppError } from '../../../src/domain/errors.js';

const clock = new ManualClock('2026-11-24T10:00:00.000Z');

describe('alert events and their bodies', () => {
  it('when a pass cannot run, then the event names the source, the code and the message', () => {
    const error = new AppError('CSV_DROP_DIR_MISSING', 'the drop folder /srv/drop does not exist');
    const event = runFailedEvent({ sourceId: 'erp-csv', error }, clock);
    expect(event).toMatchObject({
      type: 'run.failed',
      sourceId: 'erp-csv',
      occurredAt: '2026-11-24T10:00:00.000Z',
      summary:
        'erp-csv: the pass could not run: (CSV_DROP_DIR_MISSING) the drop folder /srv/drop does not exist',
      details: { errorCode: 'CSV_DROP_DIR_MISSING', error: 'the drop folder /srv/drop does not exist' },
    });
    expect(runFailedEvent({ sourceId: null, error: new Error('ECONNREFUSED') }, clock).summary).toBe(
      'the sync could not start: ECONNREFUSED',
    );
  });

  it('when a generic webhook is called, then its body is the event with the application named', () => {
    const event = sourcePausedEvent({ sourceId: 'erp-csv', failedRuns: 3, lastError: 'boom' }, clock);
    expect(webhookBody(event)).toEqual({
      app: 'receivables-sync',
      id: event.id,
      type: 'source.paused',
      occurredAt: '2026-11-24T10:00:00.000Z',
      sourceId: 'erp-csv',
      summary:
        'erp-csv paused automatically after 3 failed runs: boom. Fix the cause, then resume it on the dashboard',
      details: { failedRuns: 3, lastError: 'boom' },
    });
  });

  it("when a Slack target is called, then the body is {text, blocks} with Slack's control characters escaped", () => {
    const event = newFailuresEvent(
      { sourceId: 'a<b>&c', runId: '12', newFailures: 14, threshold: 10 },
      clock,
    );
    const body = slackBody(event);
    expect(Object.keys(body)).toEqual(['text', 'blocks']);
    expect(body.text).toBe(
      'New failures: a&lt;b&gt;&amp;c: run #12 recorded 14 new failures (threshold 10): `receivables-sync failures --source a&lt;b&gt;&amp;c` lists them',
    );
    expect(body.blocks).toEqual([
      { type: 'header', text: { type: 'plain_text', text: 'New failures', emoji: false } },
      {
        type: 'section',
        text: { type: 'mrkdwn', text: expect.stringContaining('a&lt;b&gt;&amp;c: run #12') },
      },
      { type: 'section', text: { type: 'mrkdwn', text: '*runId*: 12\n*newFailures*: 14\n*threshold*: 10' } },
      {
        type: 'context',
        elements: [
          {
            type: 'mrkdwn',
            text: 'receivables-sync · run.new-failures · a&lt;b&gt;&amp;c · 2026-11-24T10:00:00.000Z',
          },
        ],
      },
    ]);
    expect(escapeMrkdwn('<!channel> & co')).toBe('&lt;!channel&gt; &amp; co');
  });

  it('when events repeat, then run.failed is held back per source, token ones globally, and a pause or new failures never', () => {
    const failed = (sourceId: string) => runFailedEvent({ sourceId, error: new Error('down') }, clock);
    expect(throttleOf(failed('a'), 60)).toEqual({ key: 'run.failed:a', windowMs: 3_600_000 });
    expect(throttleOf(failed('b'), 60)?.key).toBe('run.failed:b');
    expect(throttleOf(failed('a'), 0)).toBeNull();
    expect(throttleOf(tokenExpiringEvent(new Date('2026-11-27T10:00:00Z'), clock), 0)).toEqual({
      key: 'token.expiring',
      windowMs: 86_400_000,
    });
    expect(
      throttleOf(sourcePausedEvent({ sourceId: 'a', failedRuns: 3, lastError: null }, clock), 60),
    ).toBeNull();
    expect(
      throttleOf(newFailuresEvent({ sourceId: 'a', runId: '1', newFailures: 5, threshold: 1 }, clock), 60),
    ).toBeNull();
  });

  it('when the refresh token expires in 2.5 days, then the event says 2 days and when', () => {
    const event = tokenExpiringEvent(new Date('2026-11-26T22:00:00.000Z'), clock);
    expect(event.details).toEqual({ expiresAt: '2026-11-26T22:00:00.000Z', daysLeft: 2 });
    expect(event.summary).toContain('in 2 days');
    expect(tokenExpiringEvent(new Date('2026-11-24T16:00:00.000Z'), clock).summary).toContain('in 6 h');
  });
});

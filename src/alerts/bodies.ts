import type { AlertEvent } from './events.js';

/** The title of each event in a chat message. */
const TITLES: Readonly<Record<AlertEvent['type'], string>> = {
  'run.failed': 'A pass could not run',
  'run.new-failures': 'New failures',
  'source.paused': 'Source paused automatically',
  'token.refused': 'Credentials refused',
  'token.expiring': 'Refresh token expiring',
};

/**
 * The body of a `webhook` target: the event as it is, with the name of the application.
 *
 * @example
 * {"app":"receivables-sync","id":"5f0c…","type":"source.paused","occurredAt":"2026-11-24T10:00:00.000Z",
 *  "sourceId":"erp-csv","summary":"erp-csv paused automatically after 3 failed runs: …",
 *  "details":{"failedRuns":3,"lastError":"…"}}
 */
export function webhookBody(event: AlertEvent): Record<string, unknown> {
  return { app: 'receivables-sync', ...event };
}

/**
 * The body of a `slack` target: an incoming webhook's `{"text", "blocks"}` (also understood by
 * Mattermost and Rocket.Chat, which read `text`). `text` is the notification's fallback; the blocks
 * show the title, the summary and the facts.
 */
export function slackBody(event: AlertEvent): { text: string; blocks: unknown[] } {
  const title = TITLES[event.type];
  const facts = Object.entries(event.details)
    .filter(([, value]) => value !== null && value !== '')
    .map(([key, value]) => `*${key}*: ${escapeMrkdwn(String(value))}`);
  const context = ['receivables-sync', event.type, event.sourceId, event.occurredAt].filter(Boolean);
  return {
    text: escapeMrkdwn(`${title}: ${event.summary}`),
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: title, emoji: false } },
      { type: 'section', text: { type: 'mrkdwn', text: escapeMrkdwn(event.summary) } },
      ...(facts.length > 0 ? [{ type: 'section', text: { type: 'mrkdwn', text: facts.join('\n') } }] : []),
      {
        type: 'context',
        elements: [{ type: 'mrkdwn', text: escapeMrkdwn(context.join(' · ')) }],
      },
    ],
  };
}

/** Slack's three control characters in `mrkdwn` text (its documented escaping). */
export const escapeMrkdwn = (text: string): string =>
  text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

export function bodyOf(type: 'webhook' | 'slack', event: AlertEvent): unknown {
  return type === 'slack' ? slackBody(event) : webhookBody(event);
}

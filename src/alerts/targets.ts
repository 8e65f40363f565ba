import type { AlertEventType, AlertsConfig, AlertTargetConfig } from '../config/schema.js';
import { AppError } from '../domain/errors.js';

/** A target ready to be called: its URL read from the environment. Never log it: log `id`. */
export interface AlertTarget {
  id: string;
  type: AlertTargetConfig['type'];
  url: string;
  /**
   * `Basic …` from credentials written in the URL (`https://user:pass@host/hook`): fetch refuses
   * a URL that holds them, so they travel as the header and the URL goes without them. Secret.
   */
  authorization?: string;
  /** Null: every event. */
  events: ReadonlySet<AlertEventType> | null;
}

/** An alert target cannot be used as configured (its URL variable unset, not a URL). */
export class AlertConfigError extends AppError {
  constructor(message: string) {
    super('ALERTS_CONFIG_INVALID', message);
  }
}

/**
 * The configured targets with their URLs from `env` (`urlEnv`), checked once at start: a target
 * that cannot be called is a configuration error, not an alert silently lost. The message names
 * the variable, never its value.
 *
 * @throws AlertConfigError listing every unusable target.
 */
export function resolveAlertTargets(
  config: Pick<AlertsConfig, 'targets'> | undefined,
  env: Readonly<Record<string, string | undefined>>,
): AlertTarget[] {
  const problems: string[] = [];
  const targets: AlertTarget[] = [];
  for (const target of config?.targets ?? []) {
    const value = env[target.urlEnv]?.trim();
    if (!value) {
      problems.push(`alerts.targets.${target.id}: ${target.urlEnv} is not set (the target's URL)`);
      continue;
    }
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      problems.push(`alerts.targets.${target.id}: ${target.urlEnv} does not hold a URL`);
      continue;
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      problems.push(`alerts.targets.${target.id}: ${target.urlEnv} must be an http(s) URL`);
      continue;
    }
    const authorization = basicAuthorizationOf(url);
    targets.push({
      id: target.id,
      type: target.type,
      url: authorization ? withoutCredentials(url) : value,
      ...(authorization ? { authorization } : {}),
      events: target.events ? new Set(target.events) : null,
    });
  }
  if (problems.length > 0)
    throw new AlertConfigError(`unusable alert targets:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  return targets;
}

/** `Basic base64(user:password)` for a URL that names them, else undefined. */
function basicAuthorizationOf(url: URL): string | undefined {
  if (!url.username && !url.password) return undefined;
  const pair = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  return `Basic ${Buffer.from(pair, 'utf8').toString('base64')}`;
}

function withoutCredentials(url: URL): string {
  const bare = new URL(url.href);
  bare.username = '';
  bare.password = '';
  return bare.href;
}

/** Whether a target wants this kind of event. */
export const wants = (target: AlertTarget, type: AlertEventType): boolean =>
  target.events === null || target.events.has(type);

/**
 * `text` without the target's URL, nor its path and query, in any form an error message may quote
 * (webhook URLs carry their secret in the path, e.g. Slack's `/services/T…/B…/<secret>`).
 */
export function withoutUrl(text: string, url: string): string {
  let out = text;
  const parts = [url];
  try {
    const parsed = new URL(url);
    parts.push(parsed.href, `${parsed.pathname}${parsed.search}`, parsed.pathname, parsed.search);
    for (const segment of parsed.pathname.split('/')) if (segment.length >= 8) parts.push(segment);
  } catch {
    // Not a URL: only its text as given is removed.
  }
  for (const part of parts.filter((p) => p.length > 1).sort((a, b) => b.length - a.length))
    out = out.split(part).join('[redacted]');
  return out;
}

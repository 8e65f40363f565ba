import { AppError, messageOf } from '../domain/errors.js';
import { bodyOf } from './bodies.js';
import type { AlertEvent } from './events.js';
import { type AlertTarget, withoutUrl } from './targets.js';

/**
 * A delivery failed. Its message names the target by id and never holds the URL. Retryable, but
 * when the target answered a status that says the URL or the body is wrong (`retryable: false`).
 */
export class AlertDeliveryError extends AppError {
  constructor(message: string, options: { retryable?: boolean; status?: number; cause?: unknown } = {}) {
    super('ALERT_DELIVERY_FAILED', message, options);
  }
}

export interface DeliverOptions {
  fetch?: typeof fetch;
  /** Per request. */
  timeoutMs: number;
  /** Aborts the request (a shutdown). */
  signal?: AbortSignal;
}

/**
 * One POST of one alert to one target, JSON in the target's shape. Resolves on a 2xx answer.
 * Rejects with `AlertDeliveryError`: retryable on a network fault, a timeout, 408, 429 or 5xx;
 * not on another answer (a 4xx: the URL or the body is wrong, trying again cannot help).
 */
export async function deliverAlert(
  target: AlertTarget,
  event: AlertEvent,
  options: DeliverOptions,
): Promise<void> {
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  let response: Response;
  try {
    response = await (options.fetch ?? fetch)(target.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'receivables-sync',
        ...(target.authorization ? { authorization: target.authorization } : {}),
      },
      body: JSON.stringify(bodyOf(target.type, event)),
      signal,
      // A redirect is answered, not followed: a 3xx fails the delivery for good (fix the URL).
      redirect: 'manual',
    });
  } catch (error) {
    const cause = (error as { cause?: unknown }).cause;
    const detail = cause ? `${messageOf(error)}: ${messageOf(cause)}` : messageOf(error);
    throw new AlertDeliveryError(`alert target ${target.id} unreachable: ${withoutUrl(detail, target.url)}`);
  }
  // The answer's body is not needed (and may echo the URL): drop it.
  await response.body?.cancel().catch(() => undefined);
  if (response.ok) return;
  const status = response.status;
  throw new AlertDeliveryError(`alert target ${target.id} answered HTTP ${status}`, {
    status,
    retryable: status === 408 || status === 429 || status >= 500,
  });
}

import { isUnknownRouteAnswer } from './compat.js';
import { ApiResponseError, UnexpectedResponseError } from './errors.js';
import type { ResponseShape } from './response-shapes.js';

/** One answer as the transport received it, with the request it answers. */
export interface Answer {
  method: string;
  path: string;
  status: number;
  headers: Headers;
  text: string;
  retryAfterSeconds?: number | undefined;
}

/** How long an excerpt of a body gets in a message, in characters. */
export const EXCERPT_LENGTH = 200;

/**
 * The parsed body of a 2xx answer, checked against `expect` when the caller relies on one: an empty
 * body, a body that is not JSON or one without what the contract gives is an
 * `UnexpectedResponseError` (`RESPONSE_INVALID`, retryable), never a TypeError further on. Without
 * `expect` (a 204, a write whose answer nobody reads), an empty body is undefined.
 */
export function successBody(answer: Answer, expect: ResponseShape | undefined): unknown {
  if (answer.text === '') {
    if (!expect) return undefined;
    throw invalid(answer, 'with an empty body where the contract gives one');
  }
  let data: unknown;
  try {
    data = JSON.parse(answer.text);
  } catch (error) {
    throw invalid(answer, 'with a body that is not JSON', error);
  }
  const wrong = expect?.(data);
  if (wrong) throw invalid(answer, `without what the contract gives (${wrong})`);
  return data;
}

/**
 * The error of a 4xx/5xx answer. The API's own JSON error (an object with a `code` or a `message`)
 * becomes an `ApiResponseError` keeping its code, message and resolution; so does a 405, or a 404 in
 * the words a framework uses for a route it does not serve ("Cannot PATCH /x"): the server itself
 * refusing the route, which `api.compat` fixes. Any other body (a load balancer's HTML page, an
 * empty one) is an `UnexpectedResponseError` naming the status, the content type and an excerpt:
 * it did not come from the API, so its 404 says nothing of a missing resource.
 */
export function errorOfAnswer(answer: Answer): ApiResponseError | UnexpectedResponseError {
  const body = apiErrorBody(answer.text);
  const common = {
    status: answer.status,
    method: answer.method,
    path: answer.path,
    retryAfterSeconds: answer.retryAfterSeconds,
  };
  if (body) {
    return new ApiResponseError({
      ...common,
      apiCode: typeof body.code === 'string' ? body.code : undefined,
      message: typeof body.message === 'string' ? body.message : undefined,
      resolution: typeof body.resolution === 'string' ? body.resolution : undefined,
    });
  }
  const excerpt = excerptOf(answer.text, answer.headers.get('content-type'));
  if (isUnknownRouteAnswer(answer.status, excerpt))
    return new ApiResponseError({ ...common, message: excerpt || undefined });
  return new UnexpectedResponseError({
    ...common,
    contentType: mediaTypeOf(answer.headers),
    excerpt,
    problem: answer.text === '' ? 'with an empty body' : "and a body that is not the API's JSON error",
  });
}

function apiErrorBody(text: string): Record<string, unknown> | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const body = parsed as Record<string, unknown>;
  return typeof body.code === 'string' || typeof body.message === 'string' ? body : undefined;
}

function invalid(answer: Answer, problem: string, cause?: unknown): UnexpectedResponseError {
  return new UnexpectedResponseError({
    cause,
    status: answer.status,
    method: answer.method,
    path: answer.path,
    contentType: mediaTypeOf(answer.headers),
    excerpt: excerptOf(answer.text, answer.headers.get('content-type')),
    problem,
    retryAfterSeconds: answer.retryAfterSeconds,
  });
}

/** `text/html` of `text/html; charset=utf-8`; undefined without the header. */
export function mediaTypeOf(headers: Headers): string | undefined {
  const type = headers.get('content-type')?.split(';')[0]?.trim().toLowerCase();
  return type ? type : undefined;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/**
 * A short printable excerpt of a body for a message: HTML (by its content type or its first
 * character) loses its tags, scripts, styles and head (its title kept when nothing else is left);
 * control characters become spaces, whitespace is collapsed, and what passes `max` characters is
 * cut with `…`.
 *
 * @example
 * excerptOf('<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1><hr>nginx</body></html>');
 * // '502 Bad Gateway nginx'
 */
export function excerptOf(text: string, contentType?: string | null, max = EXCERPT_LENGTH): string {
  let shown = text;
  if (/html|xml/i.test(contentType ?? '') || /^\s*</.test(text)) {
    const title = /<title[^>]*>([\s\S]*?)<\/title\s*>/i.exec(text)?.[1] ?? '';
    shown = stripTags(text.replace(/<(script|style|head)\b[\s\S]*?<\/\1\s*>/gi, ' '));
    if (collapse(shown) === '') shown = stripTags(title);
  }
  const printable = collapse(shown);
  const characters = Array.from(printable);
  return characters.length > max ? `${characters.slice(0, max - 1).join('')}…` : printable;
}

function stripTags(html: string): string {
  return html
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (entity, name: string) => {
      if (name[0] !== '#') return ENTITIES[name.toLowerCase()] ?? entity;
      const code =
        name[1] === 'x' || name[1] === 'X' ? Number.parseInt(name.slice(2), 16) : Number(name.slice(1));
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : ' ';
    });
}

/** Control characters and runs of whitespace become one space (no line breaks in a log line). */
function collapse(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what is replaced.
  return text.replace(/[\u0000-\u001f\u007f-\u009f\s]+/g, ' ').trim();
}

/**
 * List cursors. Two formats:
 * - `v2:<fingerprint>:<offset>` for filtered or sorted calls (and every call of a non-historical
 *   list); the fingerprint binds the cursor to the endpoint, the conditions and the sort.
 * - an opaque historical cursor (base64url of `<endpoint>|<offset>`) for unfiltered, unsorted
 *   calls of the historical lists (accounts, invoices, credit notes).
 * The offset is the index of the first item of the next page.
 */

import { createHash } from 'node:crypto';
import { ApiError } from '../errors.js';
import { conditionsFingerprintInput } from './filter-language.js';
import type { Condition, SortSpec } from './types.js';

export type DecodedCursor =
  | { format: 'v2'; fingerprint: string; offset: number }
  | { format: 'historical'; endpoint: string; offset: number };

const FINGERPRINT_LENGTH = 16;
const V2_RE = /^v2:([0-9a-f]{16}):(0|[1-9]\d*)$/;
const BASE64URL_RE = /^[A-Za-z0-9_-]+$/;
const HISTORICAL_RE = /^(\/[^|]*)\|(0|[1-9]\d*)$/;

export const cursorInvalid = (message: string): ApiError => new ApiError(400, 'LIST_CURSOR_INVALID', message);

/**
 * Short hash of endpoint + canonical conditions + sort. Order of conditions and of values inside a
 * condition does not change it (see conditionsFingerprintInput).
 */
export function listFingerprint(
  endpoint: string,
  conditions: readonly Condition[],
  sort: SortSpec | null,
): string {
  const input = JSON.stringify([
    endpoint,
    conditionsFingerprintInput(conditions),
    sort ? [sort.sortBy, sort.sortOrder] : null,
  ]);
  return createHash('sha256').update(input).digest('hex').slice(0, FINGERPRINT_LENGTH);
}

export const encodeV2Cursor = (fingerprint: string, offset: number): string => `v2:${fingerprint}:${offset}`;

export const encodeHistoricalCursor = (endpoint: string, offset: number): string =>
  Buffer.from(`${endpoint}|${offset}`, 'utf8').toString('base64url');

/** Reads either format; anything else (including a tampered cursor) is LIST_CURSOR_INVALID. */
export function decodeCursor(raw: string): DecodedCursor {
  const v2 = V2_RE.exec(raw);
  if (v2) return { format: 'v2', fingerprint: v2[1]!, offset: parseOffset(v2[2]!) };
  const historical = decodeHistorical(raw);
  if (historical) return historical;
  throw cursorInvalid('after is not a cursor issued by this API');
}

function decodeHistorical(raw: string): DecodedCursor | null {
  if (!BASE64URL_RE.test(raw)) return null;
  const text = Buffer.from(raw, 'base64url').toString('utf8');
  // Re-encoding must give back the same string: rejects padding games and invalid UTF-8.
  if (Buffer.from(text, 'utf8').toString('base64url') !== raw) return null;
  const m = HISTORICAL_RE.exec(text);
  return m ? { format: 'historical', endpoint: m[1]!, offset: parseOffset(m[2]!) } : null;
}

function parseOffset(digits: string): number {
  const offset = Number(digits);
  if (!Number.isSafeInteger(offset)) throw cursorInvalid('after is not a cursor issued by this API');
  return offset;
}

/** How the cursors of one call look: bound to a fingerprint, or historical for one endpoint. */
export type CursorMode = { format: 'v2'; fingerprint: string } | { format: 'historical'; endpoint: string };

/** The offset an `after` cursor continues from, after checking it was issued for this very call. */
export function resolveAfter(after: string | undefined, mode: CursorMode): number {
  if (after === undefined) return 0;
  const cursor = decodeCursor(after);
  if (mode.format === 'v2') {
    if (cursor.format !== 'v2') {
      throw cursorInvalid(
        'a historical cursor works only on unfiltered, unsorted calls of the accounts, invoices and credit-notes lists',
      );
    }
    if (cursor.fingerprint !== mode.fingerprint) {
      throw cursorInvalid('the cursor was issued for other filters, another sort or another endpoint');
    }
    return cursor.offset;
  }
  if (cursor.format !== 'historical') {
    throw cursorInvalid('the cursor is bound to filters or a sort; replay it with the same filters and sort');
  }
  if (cursor.endpoint !== mode.endpoint) throw cursorInvalid('the cursor was issued by another endpoint');
  return cursor.offset;
}

export function encodeCursor(mode: CursorMode, offset: number): string {
  return mode.format === 'v2'
    ? encodeV2Cursor(mode.fingerprint, offset)
    : encodeHistoricalCursor(mode.endpoint, offset);
}

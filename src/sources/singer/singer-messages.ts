import { SingerSourceError } from './errors.js';

/**
 * Singer messages (github.com/singer-io/getting-started, docs/SPEC.md), one JSON object a line.
 * Numbers keep the text the tap wrote: `JSON.parse`'s reviver is given each number's source text
 * (`1250.1` stays `1250.1`, never the float 1250.0999999999999), kept beside the parsed value for
 * the amounts a record's columns read (see `exactNumberText`).
 */

export type JsonObject = { [key: string]: unknown };

export type SingerMessage =
  | {
      type: 'SCHEMA';
      stream: string;
      schema: JsonObject;
      /** The fields that identify a record of the stream (may be empty). */
      keyProperties: readonly string[];
    }
  | { type: 'RECORD'; stream: string; record: JsonObject }
  /** `value` as the tap wrote it: the source's cursor, given back to the tap with `--state`. */
  | { type: 'STATE'; value: unknown }
  /** ACTIVATE_VERSION, BATCH and any other type: logged and ignored, as the spec says. */
  | { type: 'OTHER'; messageType: string; stream: string | null };

/** The source text of the numbers of parsed messages, by the object or array holding them. */
const exactTexts = new WeakMap<object, Map<string, string>>();

/**
 * Keeps the text of numbers a JS number cannot carry exactly: fractions (`0.1`) and integers past
 * 2^53. Safe integers read back as they were written.
 */
function keepText(this: unknown, key: string, value: unknown, context?: { source?: string }): unknown {
  if (typeof value === 'number' && context?.source !== undefined && !Number.isSafeInteger(value)) {
    const holder = this as object;
    let texts = exactTexts.get(holder);
    if (texts === undefined) {
      texts = new Map();
      exactTexts.set(holder, texts);
    }
    texts.set(key, context.source);
  }
  return value;
}

/** The number at `holder[key]` as the tap wrote it (`String(value)` for safe integers). */
export function exactNumberText(holder: object, key: string, value: number): string {
  return exactTexts.get(holder)?.get(key) ?? String(value);
}

/** Whether `line` may hold a number whose text must be kept: a digit after a `.`, an `e`, or a long run. */
const NEEDS_TEXT = /\d[.eE]|\d{16}/;

/**
 * Parses one line of a tap's output (`lineNumber` counts from 1, for the error). Blank lines are
 * null. A line that is not a JSON object with a known shape is an error naming the line.
 */
export function parseMessage(line: string, lineNumber: number): SingerMessage | null {
  const parsed = parseLine(line, lineNumber, 'Singer');
  if (parsed === null) return null;
  const stream = typeof parsed.stream === 'string' ? parsed.stream : null;
  switch (parsed.type) {
    case 'RECORD':
      if (stream === null || !isObject(parsed.record))
        throw invalid(lineNumber, line, 'a RECORD needs "stream" and a "record" object');
      return { type: 'RECORD', stream, record: parsed.record };
    case 'SCHEMA': {
      if (stream === null || !isObject(parsed.schema))
        throw invalid(lineNumber, line, 'a SCHEMA needs "stream" and a "schema" object');
      const keys = Array.isArray(parsed.key_properties)
        ? parsed.key_properties.filter((k): k is string => typeof k === 'string')
        : [];
      return { type: 'SCHEMA', stream, schema: parsed.schema, keyProperties: keys };
    }
    case 'STATE':
      if (!('value' in parsed)) throw invalid(lineNumber, line, 'a STATE needs a "value"');
      return { type: 'STATE', value: parsed.value };
    default:
      return { type: 'OTHER', messageType: parsed.type, stream };
  }
}

/** Reads one line of a tap's output into a message of the source's protocol (null: nothing to read). */
export type MessageReader = (line: string, lineNumber: number) => SingerMessage | null;

/**
 * One line as a JSON object with a `type` (null for a blank line), numbers keeping their text;
 * anything else is an error naming the line and the protocol expected.
 */
export function parseLine(
  line: string,
  lineNumber: number,
  protocol: string,
): (JsonObject & { type: string }) | null {
  if (line.trim() === '') return null;
  let parsed: unknown;
  try {
    // The reviver costs a call per value: only lines that may hold a fraction need it.
    parsed = NEEDS_TEXT.test(line) ? JSON.parse(line, keepText as never) : JSON.parse(line);
  } catch (error) {
    throw invalid(lineNumber, line, `not JSON (${(error as Error).message})`);
  }
  if (!isObject(parsed) || typeof parsed.type !== 'string') {
    throw invalid(lineNumber, line, `not a ${protocol} message (a JSON object with a "type")`);
  }
  return parsed as JsonObject & { type: string };
}

export const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export function invalid(lineNumber: number, line: string, why: string): SingerSourceError {
  const shown = line.length > 200 ? `${line.slice(0, 200)}…` : line;
  return new SingerSourceError(
    'SINGER_MESSAGE_INVALID',
    `line ${lineNumber} of the tap's output is ${why}: ${shown}`,
  );
}

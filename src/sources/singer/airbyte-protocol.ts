import type { Logger } from '../../logging/logger.js';
import { SingerSourceError } from './errors.js';
import {
  invalid,
  isObject,
  type JsonObject,
  type MessageReader,
  parseLine,
  type SingerMessage,
} from './singer-messages.js';

/**
 * The Airbyte protocol (docs.airbyte.com/understanding-airbyte/airbyte-protocol), read as the Singer
 * messages the unit takes: an Airbyte source (`docker run airbyte/source-stripe read ...`) is run
 * as `<command> read --config c.json --catalog configured.json [--state state.json]`; its `RECORD`
 * (`{record: {stream, data}}`) is a Singer RECORD of `data`; each stream's schema comes from the
 * catalog (given as a SCHEMA before the stream's first record); `STATE` messages are per stream
 * (`STREAM`), whole (`GLOBAL`) or legacy (`data`): the value kept is what the source reads back
 * with `--state`, the latest state of every stream (a list), or the latest global or legacy one.
 * `LOG` lines go to the log; a `TRACE` error is kept for the message of a failed run.
 */

/** An Airbyte stream as a catalog lists it. */
interface AirbyteStream {
  name: string;
  namespace?: string;
  json_schema?: JsonObject;
  supported_sync_modes?: string[];
  source_defined_cursor?: boolean;
  default_cursor_field?: string[];
  source_defined_primary_key?: string[][];
}

/** The streams of a catalog, discovered (`{streams: [AirbyteStream]}`) or configured (`{streams: [{stream}]}`). */
export function catalogStreamsOf(catalog: unknown): AirbyteStream[] {
  const streams = isObject(catalog) && Array.isArray(catalog.streams) ? catalog.streams : [];
  return streams
    .map((s) => (isObject(s) && isObject(s.stream) ? s.stream : s))
    .filter((s): s is AirbyteStream => isObject(s) && typeof s.name === 'string') as AirbyteStream[];
}

/**
 * The CATALOG message in what `discover` wrote, as a configured catalog of the named streams:
 * incremental where the stream supports it (its cursor the source's default), full refresh else.
 */
export function configuredCatalog(discovered: string, names: readonly string[]): JsonObject {
  let catalog: unknown = null;
  for (const line of discovered.split('\n')) {
    if (!line.trim().startsWith('{')) continue;
    try {
      const message = JSON.parse(line) as JsonObject;
      if (message.type === 'CATALOG') catalog = message.catalog;
    } catch {}
  }
  if (catalog === null)
    throw new SingerSourceError('SINGER_DISCOVERY_FAILED', "the source's discover wrote no CATALOG message");
  const streams = catalogStreamsOf(catalog);
  const missing = names.filter((n) => !streams.some((s) => s.name === n));
  if (missing.length > 0)
    throw new SingerSourceError(
      'SINGER_DISCOVERY_FAILED',
      `the tap has no stream ${missing.map((m) => `"${m}"`).join(', ')} (its streams: ${streams.map((s) => s.name).join(', ')})`,
    );
  return {
    streams: streams
      .filter((s) => names.includes(s.name))
      .map((stream) => {
        const incremental = stream.supported_sync_modes?.includes('incremental') ?? false;
        return {
          stream,
          sync_mode: incremental ? 'incremental' : 'full_refresh',
          cursor_field: incremental ? (stream.default_cursor_field ?? []) : [],
          destination_sync_mode: 'append',
          ...(stream.source_defined_primary_key ? { primary_key: stream.source_defined_primary_key } : {}),
        };
      }),
  };
}

/** Reads Airbyte messages, keeping the state to give back and the last error it reported. */
export class AirbyteReader {
  readonly #streams: Map<string, AirbyteStream>;
  readonly #schemaSent = new Set<string>();
  /** The latest STREAM state of each stream, by namespace and name. */
  readonly #streamStates = new Map<string, JsonObject>();
  #lastError: string | null = null;

  /**
   * @param catalog the configured catalog the source runs with (the schemas of its streams)
   * @param stored the state stored by the last complete run (a list of per-stream states, or one)
   */
  constructor(
    catalog: unknown,
    stored: unknown,
    private readonly logger: Logger,
  ) {
    this.#streams = new Map(catalogStreamsOf(catalog).map((s) => [s.name, s]));
    if (Array.isArray(stored))
      for (const state of stored) if (isObject(state) && state.type === 'STREAM') this.#keep(state);
  }

  /** The error the source reported last (a TRACE error, an ERROR log line), for a failed run's message. */
  get lastError(): string | null {
    return this.#lastError;
  }

  readonly read: MessageReader = (line, lineNumber) => {
    const message = parseLine(line, lineNumber, 'Airbyte');
    if (message === null) return null;
    switch (message.type) {
      case 'RECORD':
        return this.#record(message, line, lineNumber);
      case 'STATE':
        return this.#state(message, line, lineNumber);
      case 'LOG':
        this.#log(message);
        return null;
      case 'TRACE':
        this.#trace(message);
        return null;
      default:
        return { type: 'OTHER', messageType: message.type, stream: null };
    }
  };

  #record(message: JsonObject, line: string, lineNumber: number): SingerMessage | null {
    const record = message.record;
    if (!isObject(record) || typeof record.stream !== 'string' || !isObject(record.data))
      throw invalid(lineNumber, line, 'an Airbyte RECORD needs "record": { "stream", "data" }');
    return { type: 'RECORD', stream: record.stream, record: record.data };
  }

  /** The stream's SCHEMA from the catalog, once, before its first record (null when unknown or sent). */
  schemaOf(stream: string): SingerMessage | null {
    if (this.#schemaSent.has(stream)) return null;
    this.#schemaSent.add(stream);
    const known = this.#streams.get(stream);
    if (!known?.json_schema) return null;
    const key = known.source_defined_primary_key;
    const keyProperties = key && key.length === 1 && key[0]!.length === 1 ? [key[0]![0]!] : [];
    return { type: 'SCHEMA', stream, schema: known.json_schema, keyProperties };
  }

  #state(message: JsonObject, line: string, lineNumber: number): SingerMessage {
    const state = message.state;
    if (!isObject(state)) throw invalid(lineNumber, line, 'an Airbyte STATE needs a "state" object');
    if (state.type === 'STREAM') {
      this.#keep(state);
      return { type: 'STATE', value: [...this.#streamStates.values()] };
    }
    if (state.type === 'GLOBAL') return { type: 'STATE', value: [state] };
    return { type: 'STATE', value: 'data' in state ? state.data : state };
  }

  #keep(state: JsonObject): void {
    const stream = isObject(state.stream) ? state.stream : {};
    const descriptor = isObject(stream.stream_descriptor) ? stream.stream_descriptor : {};
    this.#streamStates.set(`${descriptor.namespace ?? ''}\u0000${descriptor.name ?? ''}`, state);
  }

  #log(message: JsonObject): void {
    const log = isObject(message.log) ? message.log : {};
    const text = typeof log.message === 'string' ? log.message : '';
    if (log.level === 'ERROR' || log.level === 'FATAL') {
      this.#lastError = text;
      this.logger.warn({ tap: text }, 'tap error');
    } else this.logger.debug({ tap: text, level: log.level }, 'tap log');
  }

  #trace(message: JsonObject): void {
    const trace = isObject(message.trace) ? message.trace : {};
    const error = isObject(trace.error) ? trace.error : null;
    if (trace.type !== 'ERROR' || error === null) return;
    this.#lastError = typeof error.message === 'string' ? error.message : JSON.stringify(error);
    this.logger.warn({ tap: this.#lastError }, 'tap error');
  }
}

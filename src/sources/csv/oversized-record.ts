import { incompleteTailLength } from './file-inspection.js';

/**
 * Where a record over csv-parse's `max_record_size` ends, found without holding it: csv-parse gives
 * up on such a record (`CSV_MAX_RECORD_SIZE`), and without its end the rows after it cannot be read.
 * The scan is fed the bytes csv-parse was fed, from the end of the last record it delivered, and
 * reads them by csv-parse's rules as the source's options set them (`CSV_PARSE_OPTIONS`): fields
 * split by the delimiter, a field quoted with `"` from its first character, `""` inside quotes a
 * quote, a closing quote followed only by a delimiter, a record delimiter or the end of the file,
 * blank lines skipped, the record delimiter the first line break met outside quotes (CRLF, LF or a
 * lone CR) unless the parser already settled it, and a UTF-8 BOM at the start of the file skipped.
 *
 * Where csv-parse would refuse the text (a quote inside an unquoted field, text after a closing
 * quote), the scan gives up (`broken`): the record has no end a reader can vouch for, and the
 * caller stops there as it did before. A quote never closed runs to the end of the file: no end
 * either (`finish` says so).
 *
 * Memory stays small whatever the record's length: only each field's first bytes are kept (up to
 * `FIELD_PREFIX`, for the report and the failure to show which row it was, its sourceId with it),
 * and the fields of the first `MAX_FIELDS` columns.
 */
export interface OversizedRecordScanProps {
  /** The file's delimiter, one ASCII character (`,`, `;`, tab, `|`). */
  delimiter: string;
  /** The record delimiter the parser settled on, or null when it met no line break yet. */
  recordDelimiter: RecordDelimiter | null;
  /** The physical line the scan starts on (the line after the last record read). */
  line: number;
  /** The scan starts at the file's first byte: a UTF-8 BOM there is not part of the record. */
  atFileStart: boolean;
}

/** A record delimiter as csv-parse discovers them. */
export type RecordDelimiter = '\r\n' | '\n' | '\r';

/** What is known of a record too long to read: enough to refuse it with a clear reason. */
export interface OversizedRecord {
  /** Its characters, its fields' together (delimiters and quotes aside). */
  chars: number;
  /** The field that holds most of them: its index and its characters. */
  longest: { index: number; chars: number };
  /** Indexes of the fields cut short in the row's `fields` (their first characters, then `…`). */
  cut: readonly number[];
}

/** Bytes kept of each field of an oversized record (a sourceId, a number, a date fit whole). */
export const FIELD_PREFIX = 256;
/** Fields kept of an oversized record: far more than a contract file's columns. */
const MAX_FIELDS = 1024;

const CR = 0x0d;
const LF = 0x0a;
const QUOTE = 0x22;
const BOM = [0xef, 0xbb, 0xbf] as const;

/** At a field's start; in an unquoted field; in a quoted one; a quote met in it; after its closing quote. */
type ScanState = 'start' | 'plain' | 'quoted' | 'quote-seen' | 'closed';

export class OversizedRecordScan {
  readonly #fieldDelimiter: number;
  #recordDelimiter: RecordDelimiter | null;
  #atFileStart: boolean;
  #state: ScanState = 'start';
  /** The record has begun (before that, line breaks are blank lines, skipped). */
  #started = false;
  #startLine = 0;
  /** The physical line of the next byte: CRLF, LF and a lone CR each end one. */
  #line: number;
  #previous = -1;
  /** A CR outside quotes waits for the next byte: CRLF, or a lone CR. */
  #crPending = false;
  #crLine = 0;
  #broken: string | null = null;
  readonly #fields: string[] = [];
  readonly #cut: number[] = [];
  #fieldIndex = 0;
  readonly #prefix = Buffer.allocUnsafe(FIELD_PREFIX);
  #prefixUsed = 0;
  #fieldBytes = 0;
  #fieldChars = 0;
  #chars = 0;
  #longest = { index: 0, chars: 0 };

  constructor(props: OversizedRecordScanProps) {
    this.#fieldDelimiter = props.delimiter.charCodeAt(0);
    this.#recordDelimiter = props.recordDelimiter;
    this.#line = props.line;
    this.#atFileStart = props.atFileStart;
  }

  /** Why the record cannot be read to an end (csv-parse would refuse its quoting), or null. */
  get broken(): string | null {
    return this.#broken;
  }

  /** The line after the record (once it ended): where the next record's lines count from. */
  get nextLine(): number {
    return this.#line;
  }

  /** The record delimiter, as the parser after the record must use it (null if none was met). */
  get recordDelimiter(): RecordDelimiter | null {
    return this.#recordDelimiter;
  }

  /**
   * Reads the next bytes; returns where the record ends in them (just past its record delimiter),
   * or -1 when it goes on past them, or when it broke (`broken`).
   */
  scan(bytes: Uint8Array): number {
    let from = 0;
    if (this.#atFileStart) {
      this.#atFileStart = false;
      if (bytes[0] === BOM[0] && bytes[1] === BOM[1] && bytes[2] === BOM[2]) from = BOM.length;
    }
    for (let i = from; i < bytes.length; i++) {
      const byte = bytes[i]!;
      if (this.#crPending) {
        this.#crPending = false;
        if (byte === LF) {
          this.#previous = LF; // the line was counted at its CR
          if (this.#recordEnds('\r\n')) return i + 1;
          continue;
        }
        if (this.#recordDelimiter === null) {
          // The first line break is a lone CR: the file's records end with CR (the byte is the next record's).
          if (this.#recordEnds('\r')) return i;
        } else if (!this.#content(CR, this.#crLine)) return -1; // in a CRLF file, a lone CR is text
      }
      const line = this.#line;
      if (byte === CR || (byte === LF && this.#previous !== CR)) this.#line++;
      this.#previous = byte;
      if (this.#state === 'quoted') {
        if (byte === QUOTE) this.#state = 'quote-seen';
        else this.#take(byte);
        continue;
      }
      if (this.#state === 'quote-seen') {
        if (byte === QUOTE) {
          this.#take(QUOTE); // `""`: a quote in the value
          this.#state = 'quoted';
          continue;
        }
        this.#state = 'closed'; // then only a delimiter or a record delimiter may follow
      }
      if (byte === CR && this.#recordDelimiter !== '\n') {
        if (this.#recordDelimiter === '\r') {
          if (this.#recordEnds('\r')) return i + 1;
          continue;
        }
        this.#crPending = true;
        this.#crLine = line;
        continue;
      }
      if (byte === LF && (this.#recordDelimiter === null || this.#recordDelimiter === '\n')) {
        if (this.#recordEnds('\n')) return i + 1;
        continue;
      }
      if (byte === this.#fieldDelimiter) {
        this.#begin(line);
        this.#endField();
        this.#state = 'start';
        continue;
      }
      if (byte === QUOTE && this.#state === 'start') {
        this.#begin(line);
        this.#state = 'quoted';
        continue;
      }
      if (byte === QUOTE && this.#state === 'plain') {
        this.#break(`a quote inside an unquoted value, on line ${line}`);
        return -1;
      }
      if (!this.#content(byte, line)) return -1;
    }
    return -1;
  }

  /** At the end of the file: whether the record ended there (a quote never closed does not end). */
  finish(): boolean {
    if (this.#crPending) {
      this.#crPending = false;
      if (this.#recordDelimiter === null) return this.#recordEnds('\r');
      if (!this.#content(CR, this.#crLine)) return false;
    }
    if (this.#broken !== null || !this.#started) return false;
    if (this.#state === 'quoted') {
      this.#break(`a quote opened on line ${this.#startLine} is never closed`);
      return false;
    }
    this.#endField();
    return true;
  }

  /** The record as a row (once it ended): its line, its fields' first characters, its size. */
  row(): { line: number; fields: string[]; oversized: OversizedRecord } {
    return {
      line: this.#startLine,
      fields: this.#fields,
      oversized: { chars: this.#chars, longest: { ...this.#longest }, cut: this.#cut },
    };
  }

  /** A record delimiter outside quotes: the record ends, or, before it began, a blank line is skipped. */
  #recordEnds(delimiter: RecordDelimiter): boolean {
    this.#recordDelimiter ??= delimiter;
    if (!this.#started) return false;
    this.#endField();
    return true;
  }

  /** A character of a value outside quotes: refused right after a closing quote, as csv-parse does. */
  #content(byte: number, line: number): boolean {
    if (this.#state === 'closed') {
      this.#break(`text after a closing quote, on line ${line}`);
      return false;
    }
    this.#begin(line);
    this.#state = 'plain';
    this.#take(byte);
    return true;
  }

  #begin(line: number): void {
    if (this.#started) return;
    this.#started = true;
    this.#startLine = line;
  }

  /** One byte of the current field's value: counted (UTF-8 lead bytes are its characters), and kept if early. */
  #take(byte: number): void {
    if ((byte & 0xc0) !== 0x80) this.#fieldChars++;
    if (this.#prefixUsed < FIELD_PREFIX) this.#prefix[this.#prefixUsed++] = byte;
    this.#fieldBytes++;
  }

  #endField(): void {
    const index = this.#fieldIndex++;
    if (this.#fieldChars > this.#longest.chars) this.#longest = { index, chars: this.#fieldChars };
    this.#chars += this.#fieldChars;
    if (index < MAX_FIELDS) {
      const cut = this.#fieldBytes > this.#prefixUsed;
      let kept = this.#prefix.subarray(0, this.#prefixUsed);
      // A character cut at the end of what was kept is left out, not shown as U+FFFD.
      if (cut) kept = kept.subarray(0, kept.length - incompleteTailLength(kept));
      this.#fields.push(cut ? `${kept.toString('utf8')}…` : kept.toString('utf8'));
      if (cut) this.#cut.push(index);
    }
    this.#prefixUsed = 0;
    this.#fieldBytes = 0;
    this.#fieldChars = 0;
  }

  #break(reason: string): void {
    this.#broken ??= reason;
  }
}

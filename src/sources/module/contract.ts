import type { Clock } from '../../domain/clock.js';
import type { CursorValue, RecordOrigin, RowProblem, Stream } from '../../domain/records.js';
import type { Logger } from '../../logging/logger.js';
import type { DownstreamFailure } from '../source.js';

/**
 * What a user's module implements: the source port, with a little slack so a plain JS module stays
 * short (sync iterables accepted, `name`, `complete`, `abandon`, `release` optional, bare records
 * accepted in `records`). Everything it yields is validated like a CSV row before the engine sees it.
 *
 * @example
 *   // my-source.js
 *   export default function createSource(options, context) {
 *     return {
 *       async *units() {
 *         yield { stream: 'accounts', batches: async function* () {
 *           yield { records: [{ sourceId: 'C-1', fullName: 'ACME', currencyCode: 'EUR' }] };
 *         } };
 *       },
 *     };
 *   }
 */
export type ModuleSourceFactory = (
  options: Record<string, unknown>,
  context: ModuleSourceContext,
) => ModuleSource | Promise<ModuleSource>;

export interface ModuleSourceContext {
  /** The configured source id. */
  sourceId: string;
  /** A child logger (pino): `context.logger.info({ count }, 'read')`. */
  logger: Logger;
  clock: Clock;
  /** The process environment, for the module's own secrets (`env.MY_API_TOKEN`). */
  env: Readonly<Record<string, string | undefined>>;
  /** The folder of the module file: relative `file` paths of documents are resolved against it. */
  moduleDir: string;
  /**
   * The source's cursors, one per stream, kept in the state DB, shown by `receivables-sync status`
   * and reset by `status reset-cursor`. Set one in a unit's `complete` (never before: the records
   * are synced only by then).
   */
  cursors: {
    get(stream: Stream): Promise<CursorValue | null>;
    set(stream: Stream, cursor: CursorValue): Promise<void>;
  };
}

export interface ModuleSource {
  units(signal?: AbortSignal): AsyncIterable<ModuleUnit> | Iterable<ModuleUnit>;
}

export interface ModuleUnit {
  stream: Stream;
  /** Shown in progress and logs; default `<sourceId>/<stream>`. */
  name?: string;
  batches(): AsyncIterable<ModuleBatch> | Iterable<ModuleBatch>;
  /** Every record was synced or recorded as a failure: advance your cursor here. */
  complete?(outcome: { failures: readonly DownstreamFailure[] }): Promise<void> | void;
  /** The unit could not be read to its end: leave your cursor. */
  abandon?(reason: string): Promise<void> | void;
  /** A dry run read the unit: leave your cursor. */
  release?(): Promise<void> | void;
}

export interface ModuleBatch {
  /** Records with the contract's fields (`billingAddress` nested or as `billingAddress.city` keys). */
  records: Array<{ record: Record<string, unknown>; origin?: RecordOrigin } | Record<string, unknown>>;
  /** Rows the module refused itself. */
  rejected?: RowProblem[];
}

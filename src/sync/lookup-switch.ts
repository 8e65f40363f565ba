import type { Logger } from 'pino';
import { errorKindOf } from '../domain/errors.js';
import type { RecordKind } from '../domain/records.js';

/**
 * How a pass finds out whether the service already holds a record the record map does not know:
 * by creating it (one request; the service refuses a duplicate account source or document
 * `sourceId`, and the refused record is looked up and adopted), or by looking records up in
 * batches of 50 before creating them (1/50 of a request more per record, but no refused create
 * per record the service already holds).
 *
 * A pass creates first: the record map is the truth of what this source synced, and an empty one
 * is a new source. The first create that meets an existing record shows that the record map does
 * not know everything the service holds (a lost, restored or replaced state DB): from then on the
 * pass looks up first. A dry run always looks up first (it plans without writing, so only a lookup
 * tells "create" from "adopt").
 *
 * Safety never depends on the mode: a create that meets an existing record adopts it, and a create
 * sent again after a crash carries its stored Idempotency-Key, so the service replays it.
 */
export class LookupSwitch {
  #lookUpFirst: boolean;
  /** The service has answered a create of the pass (see `firstAlone`). */
  #answered = false;
  /** Settles when the pass's first create is answered; rejects with what stopped it otherwise. */
  #first: Promise<void> | undefined;

  constructor(private readonly props: LookupSwitchProps) {
    this.#lookUpFirst = props.lookUpFirst;
  }

  /** Whether records the record map does not know are looked up before they are created. */
  get lookUpFirst(): boolean {
    return this.#lookUpFirst;
  }

  /**
   * Runs the sync of a record the record map does not know. While creating first, the pass's first
   * such record runs alone, and the others wait until the service has answered it: a lost state DB
   * then costs one refused create rather than one per record in flight, and an unreachable API one
   * request (retried) rather than one per record in flight. When that first one fails for anything
   * but its data (the API, the network, the state DB: the pass stops), the waiting ones fail with it.
   */
  async firstAlone<T>(run: () => Promise<T>): Promise<T> {
    if (this.#lookUpFirst || this.#answered) return run();
    if (this.#first) {
      await this.#first;
      return run();
    }
    let settle: (error?: unknown) => void = () => {};
    this.#first = new Promise<void>((resolve, reject) => {
      settle = (error) => (error === undefined ? resolve() : reject(error));
    });
    // Nobody may be waiting: the rejection is theirs to see, never an unhandled one.
    this.#first.catch(() => undefined);
    try {
      const result = await run();
      this.#answered = true;
      settle();
      return result;
    } catch (error) {
      const answered = errorKindOf(error) === 'data';
      this.#answered = answered;
      settle(answered ? undefined : error);
      throw error;
    }
  }

  /**
   * A create of a record the record map did not know met one the service holds (adopted): the rest
   * of the pass looks records up first.
   */
  metExisting(kind: RecordKind, sourceKey: string): void {
    if (this.#lookUpFirst) return;
    this.#lookUpFirst = true;
    this.props.logger.info(
      { kind, sourceKey },
      'the service already held a record the state DB did not know (a lost or restored state DB?): adopted; the rest of the pass looks records up before creating them',
    );
  }
}

export interface LookupSwitchProps {
  /** Start looking up first (a dry run); else create first until a create meets an existing record. */
  lookUpFirst: boolean;
  logger: Logger;
}

/**
 * What the service holds of one batch's records that the record map does not know, as each record
 * asks for it. Looking up first: the whole batch is looked up before its first record starts.
 * Creating first: a record gets `undefined` (create it), except the ones in `alwaysLookUp` (records
 * that need the service's copy whatever the mode: a deleted one, to unlink it); once the pass
 * switches, the first record that asks looks up, in one go, itself and every unknown record of the
 * batch that has not asked yet.
 */
export class BatchRemotes<T> {
  readonly #waiting: Set<string>;
  #found: Promise<Map<string, T>> | undefined;
  #forced: Promise<Map<string, T>> | undefined;

  private constructor(private readonly props: BatchRemotesProps<T>) {
    this.#waiting = new Set(props.unknown);
  }

  /**
   * Looks the batch's unknown records up now when the pass looks up first (so a fault of the API
   * stops the pass before any write of the batch), and the `alwaysLookUp` ones in any case.
   */
  static async prepare<T>(props: BatchRemotesProps<T>): Promise<BatchRemotes<T>> {
    const remotes = new BatchRemotes(props);
    if (props.modes.lookUpFirst) {
      remotes.#found = props.find([...remotes.#waiting]);
      remotes.#waiting.clear();
      await remotes.#found;
    } else {
      const forced = [...new Set(props.alwaysLookUp ?? [])].filter((k) => remotes.#waiting.has(k));
      if (forced.length > 0) {
        for (const key of forced) remotes.#waiting.delete(key);
        remotes.#forced = props.find(forced);
        await remotes.#forced;
      }
    }
    return remotes;
  }

  /** The service's copy of an unknown record, or undefined: create it (or it does not exist). */
  async get(key: string): Promise<T | undefined> {
    const forced = (await this.#forced)?.get(key);
    if (forced !== undefined) return forced;
    if (this.#waiting.delete(key)) {
      if (!this.props.modes.lookUpFirst) return undefined;
      // Switched during the batch: this record and every unknown one that has not started yet.
      this.#found = this.props.find([key, ...this.#waiting]);
      this.#waiting.clear();
    }
    return this.#found ? (await this.#found).get(key) : undefined;
  }
}

export interface BatchRemotesProps<T> {
  /** The keys of the batch the record map does not hold. */
  unknown: readonly string[];
  /** Among them, the ones whose service copy is needed whatever the mode. */
  alwaysLookUp?: readonly string[];
  modes: Pick<LookupSwitch, 'lookUpFirst'>;
  /** Batched lookup (50 keys a request) of these keys: what the service holds, by key. */
  find: (keys: string[]) => Promise<Map<string, T>>;
}

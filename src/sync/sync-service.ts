import type { Logger } from 'pino';
import type { SourceConfig } from '../config/schema.js';
import { messageOf } from '../domain/errors.js';
import type { RecordKind } from '../domain/records.js';
import type { SourceFactory } from '../sources/create-source.js';
import { describeSource } from '../sources/describe-source.js';
import type { Source } from '../sources/source.js';
import type { PassScope, ProgressEvent } from './pass-scope.js';
import type { SyncApi, SyncState } from './ports.js';
import { replaySource, retryableFailures, storedItems } from './replay-source.js';
import { type PassFence, runPass, type SourceSummary } from './run-sync.js';
import { settleUnreadFiles, type UnreadFilesProps } from './unread-files.js';

export interface SyncServiceProps {
  sources: readonly SourceConfig[];
  /**
   * The API, or where each source's is (its connection and organization): resolved before anything
   * of the source is read from the state DB, whose record map is keyed by them.
   */
  api: SyncApi | ((config: SourceConfig) => Promise<SyncApi>);
  /**
   * Runs each pass of a source inside it (the runtime: the source's flow of the rate limiter's fair
   * queuing, with its weight).
   */
  around?: <T>(config: SourceConfig, pass: () => Promise<T>) => Promise<T>;
  state: SyncState;
  logger: Logger;
  /** Builds the source of a configuration (CSV drop folder, SQL, module) and repairs cut-short passes. */
  sourceFactory: SourceFactory;
  clock?: PassScope['clock'];
  concurrency?: number;
  onProgress?: (event: ProgressEvent) => void;
  /**
   * Asked before each batch of every pass whether it may go on (the embedded state DB's free
   * space): resolves, or throws an error that is not `data`, which stops the pass as an outage.
   */
  guard?: () => Promise<void>;
}

/** What a retry of failures did, and what it could not retry. */
export interface FailureRetry {
  /** The pass that synced the stored payloads again; null when there was none to send. */
  summary: SourceSummary | null;
  /** Rows refused by validation: they need corrected data, dropped again. */
  needData: number;
  /**
   * Files that could not be read at all (stage `file`): retried by fixing the file (or the source's
   * `files` / `format` / `columns`) and dropping it again. `setAside`: where it waits (`rejected/<name>`).
   */
  rejectedFiles: Array<{ file: string; setAside: string | null; reason: string }>;
}

/** The use cases a job or a command runs (what the worker's processor and the metrics wrap). */
export type SyncUseCases = Pick<
  SyncService,
  'syncSource' | 'retryFailures' | 'resyncRecord' | 'recoverInterrupted' | 'hasRecord'
>;

/**
 * The use cases around `runSync`, shared by the CLI and the worker's jobs: a pass of a source,
 * a full re-sync, a retry of failures, the re-sync of one record.
 */
export class SyncService {
  constructor(private readonly props: SyncServiceProps) {}

  configOf(sourceId: string): SourceConfig {
    const config = this.props.sources.find((s) => s.id === sourceId);
    if (!config) throw new Error(`no source "${sourceId}" in the configuration`);
    return config;
  }

  /**
   * One pass of the source (see `SyncSourceOptions`): with `full`, a replay of what is known first.
   * A fault that stops a pass is thrown as it was; what the pass had done goes to `onStopped`.
   */
  async syncSource(sourceId: string, options: SyncSourceOptions = {}): Promise<SourceSummary[]> {
    const config = this.configOf(sourceId);
    const api = await this.#apiForPass(
      config,
      options.trigger ?? (options.full ? 'full' : 'once'),
      options.dryRun,
    );
    const summaries: SourceSummary[] = [];
    if (options.full && !options.dryRun) {
      await this.props.state.recordMap.resetHashes(sourceId);
      await this.props.state.cursors.reset(sourceId);
      const stored = storedItems(await this.props.state.recordMap.storedRecords(sourceId));
      this.props.logger.info({ sourceId, records: stored.length }, 'full re-sync: replaying known records');
      summaries.push(
        await this.#run(
          config,
          api,
          replaySource(sourceId, 'full re-sync', stored),
          options.trigger ?? 'full',
          {
            dryRun: false,
            fence: options.fence,
            onStopped: options.onStopped,
          },
        ),
      );
      // Cancelled while it replayed: the pass of the source is not started either.
      if (summaries[0]?.cancelled) return summaries;
    }
    const source = this.props.sourceFactory.create(config, { dryRun: options.dryRun ?? false });
    summaries.push(
      await this.#run(config, api, source, options.trigger ?? 'once', {
        dryRun: options.dryRun ?? false,
        fence: options.fence,
        onStopped: options.onStopped,
      }),
    );
    return summaries;
  }

  /**
   * Syncs the source's failed records (or only the failures `only.ids`) again from their stored
   * payload. Rows refused by validation (`needData`) and files that could not be read at all
   * (`rejectedFiles`) have nothing to send again: they are counted and named, for the caller to say
   * what fixes them.
   */
  async retryFailures(sourceId: string, only?: { ids: readonly string[] }): Promise<FailureRetry> {
    const config = this.configOf(sourceId);
    const api = await this.#apiOf(config);
    const open = await this.props.state.failures.open({ sourceId, ...(only ? { ids: only.ids } : {}) });
    const { items, needData, needFile } = retryableFailures(open);
    const rejectedFiles = needFile.map((f) => ({ file: f.sourceKey, setAside: f.file, reason: f.message }));
    if (items.length === 0) return { summary: null, needData: needData.length, rejectedFiles };
    return {
      summary: await this.#run(config, api, replaySource(sourceId, 'failure retry', items), 'retry'),
      needData: needData.length,
      rejectedFiles,
    };
  }

  /**
   * Puts back what a pass of the source left when its process was killed (a CSV source's claimed
   * files), so the next pass takes it at once. Call it only while no pass of the source can run
   * (under the source lock).
   */
  async recoverInterrupted(sourceId: string): Promise<string[]> {
    return this.props.sourceFactory.recoverInterrupted(this.configOf(sourceId));
  }

  /** Whether the state DB holds this record (a re-sync of an unknown record can never succeed). */
  async hasRecord(sourceId: string, kind: RecordKind, sourceKey: string): Promise<boolean> {
    await this.#apiOf(this.configOf(sourceId));
    const rows = await this.props.state.recordMap.storedRecords(sourceId, { kind, keys: [sourceKey] });
    return rows.length > 0;
  }

  /** Re-sends one record as last synced (its hash is forgotten first, so it is compared again). */
  async resyncRecord(sourceId: string, kind: RecordKind, sourceKey: string): Promise<SourceSummary> {
    const config = this.configOf(sourceId);
    const api = await this.#apiOf(config);
    const rows = await this.props.state.recordMap.storedRecords(sourceId, { kind, keys: [sourceKey] });
    if (rows.length === 0) throw new Error(`${sourceId} has no synced ${kind} "${sourceKey}"`);
    await this.props.state.recordMap.resetHash(sourceId, kind, [sourceKey]);
    return this.#run(config, api, replaySource(sourceId, 'record re-sync', storedItems(rows)), 'manual');
  }

  /**
   * The source's API for a pass. When it cannot be had (no organization settled for the source,
   * its connection's server or credentials failing before anything is read), a failed run records
   * why, as a pass that fails does (`status` and the dashboard say it), unless it is a dry run; the
   * error goes on to the caller either way.
   */
  async #apiForPass(config: SourceConfig, trigger: string, dryRun = false): Promise<SyncApi> {
    try {
      return await this.#apiOf(config);
    } catch (error) {
      if (!dryRun) await this.#recordNotStarted(config.id, trigger, error);
      throw error;
    }
  }

  async #recordNotStarted(sourceId: string, trigger: string, error: unknown): Promise<void> {
    try {
      const runId = await this.props.state.runs.start(sourceId, trigger, false);
      await this.props.state.runs.finish(runId, 'failed', {}, messageOf(error));
    } catch (recording) {
      // The state DB itself may be what failed: the caller's error says more than this one.
      this.props.logger.error(
        { sourceId, reason: messageOf(recording) },
        'the pass that could not start is not recorded',
      );
    }
  }

  #apiOf(config: SourceConfig): Promise<SyncApi> {
    const { api } = this.props;
    return typeof api === 'function' ? api(config) : Promise.resolve(api);
  }

  /** The pass's fence with the service's guard before it (the guard alone when there is no fence). */
  #fenced(fence: PassFence | undefined): PassFence {
    const { guard } = this.props;
    return async (runId) => {
      await guard?.();
      await fence?.(runId);
    };
  }

  #run(
    config: SourceConfig,
    api: SyncApi,
    source: Source,
    trigger: string,
    options: PassOptions = {},
  ): Promise<SourceSummary> {
    const pass = () => this.#pass(config, api, source, trigger, options);
    return this.props.around ? this.props.around(config, pass) : pass();
  }

  /**
   * One pass, then what it did with whole files: the files it could not read kept with its run and
   * recorded as file-level failures, those of the files it read resolved (see `unread-files.ts`).
   */
  async #pass(
    config: SourceConfig,
    api: SyncApi,
    source: Source,
    trigger: string,
    { dryRun = false, fence, onStopped }: PassOptions,
  ): Promise<SourceSummary> {
    const started: string[] = [];
    const { onProgress } = this.props;
    const files: UnreadFilesProps = {
      state: this.props.state,
      logger: this.props.logger,
      unreadUnit: describeSource(config).unreadUnit,
    };
    const outcome = await runPass({
      source,
      connectionId: config.connectionId ?? config.id,
      api,
      state: this.props.state,
      logger: this.props.logger,
      trigger,
      dryRun,
      ...(this.props.concurrency ? { concurrency: this.props.concurrency } : {}),
      ...(this.props.clock ? { clock: this.props.clock } : {}),
      ...(fence || this.props.guard ? { fence: this.#fenced(fence) } : {}),
      onProgress: (event) => {
        if (event.type === 'unit') started.push(event.name);
        onProgress?.(event);
      },
    });
    const { summary } = outcome;
    if (outcome.stopped) {
      // The files it set aside before it stopped are named all the same.
      if (!dryRun) await settleUnreadFiles(files, summary, null);
      onStopped?.(summary);
      throw outcome.error;
    }
    // A cancelled pass read none of its files to their end: it resolves none of their failures.
    if (!dryRun) await settleUnreadFiles(files, summary, summary.cancelled ? null : started);
    return summary;
  }
}

/** How `syncSource` runs its passes. */
export interface SyncSourceOptions {
  /** What the runs record as having started them (default `once`, or `full`). */
  trigger?: string;
  /** Read and plan only: nothing is written to the API or to the state DB. */
  dryRun?: boolean;
  /** Forget the source's hashes and cursors, replay the records it knows, then run the pass. */
  full?: boolean;
  /** Asked before each batch whether the pass may go on (the worker's source lock). */
  fence?: PassFence;
  /**
   * Told what a pass had done when a fault stopped it (its counts as its run recorded them), just
   * before the fault is thrown, as it was.
   */
  onStopped?: (partial: SourceSummary) => void;
}

/** What one pass of `#run` is asked to do beyond its source. */
interface PassOptions {
  dryRun?: boolean | undefined;
  fence?: PassFence | undefined;
  onStopped?: ((partial: SourceSummary) => void) | undefined;
}

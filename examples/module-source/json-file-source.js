/**
 * An example module source for receivables-sync: accounts, invoices and credit notes read from a
 * JSON file (`data.json` beside this file by default). Plain JavaScript, no dependency, no build.
 *
 * The module default-exports a factory `(options, context) => source`:
 * - `options` is the `options:` mapping of the source in the configuration file, as written;
 * - `context` gives `sourceId`, a pino `logger`, a `clock`, `env`, `moduleDir` (this file's folder)
 *   and `cursors` ({ get(stream), set(stream, value) }: kept in the state DB, shown by
 *   `receivables-sync status`, reset by `receivables-sync status reset-cursor`).
 *
 * A source has `units()`, yielding one unit per stream (accounts first, then invoices, then credit
 * notes). A unit has `stream`, `batches()` (yielding `{ records: [...] }`) and, optionally, `name`,
 * `complete()`, `abandon()` and `release()`. Records carry the CSV contract's fields; receivables-sync
 * validates each one like a CSV row, so a bad one is reported as a failure instead of reaching the API.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { basename, resolve } from 'node:path';

const STREAMS = ['accounts', 'invoices', 'creditNotes'];

/**
 * @param {{ file?: string, batchSize?: number }} options
 * @param {{ sourceId: string, logger: import('pino').Logger, moduleDir: string,
 *           cursors: { get(stream: string): Promise<object | null>, set(stream: string, value: object): Promise<void> } }} context
 */
export default function createJsonFileSource(options, context) {
  const file = resolve(context.moduleDir, options.file ?? 'data.json');
  const batchSize = options.batchSize ?? 100;

  return {
    async *units() {
      const data = JSON.parse(await readFile(file, 'utf8'));
      for (const stream of STREAMS) {
        const records = data[stream] ?? [];
        // This source's cursor: a checksum of the stream's records. Unchanged data is not read again
        // (receivables-sync would find every record unchanged anyway, but this skips even that).
        const checksum = createHash('sha256').update(JSON.stringify(records)).digest('hex');
        const previous = await context.cursors.get(stream);
        if (previous?.checksum === checksum) {
          context.logger.debug({ stream }, 'unchanged since the last pass');
          continue;
        }
        yield {
          stream,
          name: `${context.sourceId}/${stream} (${basename(file)})`,
          async *batches() {
            for (let i = 0; i < records.length; i += batchSize) {
              const slice = records.slice(i, i + batchSize);
              // `origin` says where a record came from in failure reports; a bare record is fine too.
              yield {
                records: slice.map((record, j) => ({
                  record,
                  origin: { file: basename(file), line: i + j + 1 },
                })),
              };
            }
          },
          // Called once every record of the unit was synced or recorded as a failure: only then may
          // the cursor move. Failed records are retried by `receivables-sync failures retry`.
          async complete({ failures }) {
            await context.cursors.set(stream, { checksum, records: records.length });
            context.logger.info(
              { stream, records: records.length, failed: failures.length },
              'stream synced',
            );
          },
          // abandon() and release() are optional: without them the cursor simply stays.
        };
      }
    },
  };
}

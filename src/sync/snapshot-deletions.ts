import { messageOf } from '../domain/errors.js';
import {
  type AccountRecord,
  KIND_OF_STREAM,
  type RecordKind,
  type RecordOrigin,
  STREAM_OF,
  type Stream,
  streamNoun,
} from '../domain/records.js';
import type { SourceUnit, UnitSnapshot } from '../sources/source.js';
import { syncAccounts } from './account-sync.js';
import { recordFailure } from './failure-recorder.js';
import { fail } from './outcome.js';
import type { PassIdentity, PassPorts, PassScope } from './pass-scope.js';
import type { TagResolver } from './tag-resolver.js';

/**
 * The deletions of a unit that is the whole set of its stream (a CSV file in snapshot mode): the
 * records of the stream the record map holds, still linked, that the unit did not hold. They are
 * handled like the SQL source's tombstones: an account's source is unlinked (or the account tagged,
 * or it is only reported, by `onDelete`); documents are never deleted through the API, so absent
 * ones are only reported. When more than `maxDeleteRatio` of the linked records are absent, the
 * unit is taken for a short export: nothing is deleted, and the deletions are reported as held.
 */

/** What a snapshot unit did with the records it lacked: in the pass summary, the run and the report. */
export interface SnapshotOutcome {
  unit: string;
  stream: Stream;
  /**
   * `applied`: the deletions were made (or planned, in a dry run); `held`: too many, none made;
   * `reported`: nothing to do by design (documents, `onDelete: skip`); `incomplete`: the unit was
   * not read whole, so it cannot tell what is absent.
   */
  action: 'applied' | 'held' | 'reported' | 'incomplete';
  onDelete: UnitSnapshot['onDelete'];
  maxDeleteRatio: number;
  /** Records of the stream held for the source, still linked, when the unit was read. */
  linked: number;
  /** Of those, the ones the unit lacked (those tagged before, with `onDelete: tag`, not counted). */
  absent: number;
  /** Deletions made (planned in a dry run), and deletions that failed (recorded as failures). */
  applied: number;
  failed: number;
  /** The first absent keys, for the summary and the log. */
  sample: string[];
  /** One sentence for the summary, the log and the unit's report. */
  message: string;
}

/** Record map keys read per query, and absent accounts synced per engine batch. */
const PAGE = 1_000;
const CHUNK = 500;
const SAMPLE = 10;

/**
 * Applies the deletions of a snapshot unit whose batches were drained, before it is completed.
 * Returns null when nothing is absent. A fault (API, state DB) releases the unit untouched and is
 * thrown, as a fault while reading it would be: the next pass reads the file again.
 */
export async function applyUnitSnapshot(
  ctx: PassScope,
  tags: TagResolver,
  unit: SourceUnit,
  snapshot: UnitSnapshot,
): Promise<SnapshotOutcome | null> {
  try {
    return await applySnapshot(ctx, tags, unit, snapshot);
  } catch (error) {
    ctx.logger.error({ unit: unit.name, reason: messageOf(error) }, 'pass stopped: unit released');
    await unit
      .release()
      .catch((released: unknown) =>
        ctx.logger.error({ unit: unit.name, reason: messageOf(released) }, 'unit could not be released'),
      );
    throw error;
  }
}

async function applySnapshot(
  ctx: PassScope,
  tags: TagResolver,
  unit: SourceUnit,
  snapshot: UnitSnapshot,
): Promise<SnapshotOutcome | null> {
  const { stream } = unit;
  const kind = KIND_OF_STREAM[stream];
  const store = ctx.state.recordMap;
  const base = {
    unit: unit.name,
    stream,
    onDelete: snapshot.onDelete,
    maxDeleteRatio: snapshot.maxDeleteRatio,
    applied: 0,
    failed: 0,
  };
  const incomplete = snapshot.incomplete();
  if (incomplete !== null) {
    const message = `snapshot mode: the file was not read whole (${incomplete}), so no ${label(stream, 1)} absent from it was deleted`;
    ctx.logger.warn({ unit: unit.name, stream }, message);
    return { ...base, action: 'incomplete', linked: 0, absent: 0, sample: [], message };
  }
  const deleting = kind === 'account' && snapshot.onDelete !== 'skip';
  const linked = await store.countLinked(ctx.sourceId, kind);
  const allowed = deleting ? Math.floor(snapshot.maxDeleteRatio * linked + 1e-9) : 0;
  // Enough keys to delete them all (within the ratio), and at least a sample to name when held.
  const found = await absentKeys(ctx, snapshot, kind, deleting ? Math.max(allowed + 1, SAMPLE) : SAMPLE);
  if (found.absent === 0) {
    ctx.logger.debug({ unit: unit.name, stream, linked }, 'snapshot mode: nothing absent');
    return null;
  }
  const sample = found.keys.slice(0, SAMPLE);
  const outcome = { ...base, linked, absent: found.absent, sample };
  const count = `${found.absent} ${label(stream, found.absent)}`;
  const keys = `${sample.join(', ')}${found.absent > sample.length ? ', …' : ''}`;
  if (!deleting) {
    const why =
      kind === 'account'
        ? 'left linked (onDelete: skip)'
        : 'left as they are (documents are never deleted through the API)';
    const message = `snapshot mode: ${count} synced before ${found.absent === 1 ? 'is' : 'are'} absent from this file, ${why}: ${keys}`;
    ctx.logger.warn({ unit: unit.name, stream, absent: found.absent, sample }, message);
    return { ...outcome, action: 'reported', message };
  }
  if (found.absent > allowed) {
    const share = `${percent(found.absent / linked)} of the ${linked} linked`;
    const message =
      `snapshot mode: ${count} (${share}) ${found.absent === 1 ? 'is' : 'are'} absent from this file, more than ` +
      `maxDeleteRatio (${percent(snapshot.maxDeleteRatio)}): taken for a short export, the deletions are held ` +
      `and none was ${verb(snapshot.onDelete)}; drop a complete file, or raise maxDeleteRatio to apply them: ${keys}`;
    ctx.logger.warn({ unit: unit.name, stream, absent: found.absent, linked, sample }, message);
    return { ...outcome, action: 'held', message };
  }
  const done = await deleteAccounts(ctx, tags, unit, snapshot, found.keys);
  const was = ctx.dryRun ? 'would be' : found.absent === 1 ? 'was' : 'were';
  const failed = done.failed > 0 ? ` (${done.failed} failed, see the failures)` : '';
  const message = `snapshot mode: ${count} absent from this file ${was} ${verb(snapshot.onDelete)}${failed}: ${keys}`;
  ctx.logger.info({ unit: unit.name, stream, absent: found.absent, ...done, sample }, message);
  return { ...outcome, action: 'applied', applied: done.applied, failed: done.failed, message };
}

/**
 * Pages through the record map's linked keys of the kind and counts those the unit did not hold,
 * keeping the first `keep` of them (all of them when they are to be deleted, within the ratio).
 * With `onDelete: tag`, a record already carrying the tag is done: neither counted nor kept.
 */
async function absentKeys(
  ctx: PassIdentity & PassPorts,
  snapshot: UnitSnapshot,
  kind: RecordKind,
  keep: number,
): Promise<{ absent: number; keys: string[] }> {
  const keys: string[] = [];
  let absent = 0;
  const tag = snapshot.onDelete === 'tag' ? snapshot.deletedTag.toLowerCase() : null;
  for (let after: string | null = null; ; ) {
    const page = await ctx.state.recordMap.linkedKeysPage(ctx.sourceId, kind, after, PAGE);
    for (const { sourceKey, tags } of page) {
      if (snapshot.holds(sourceKey)) continue;
      if (tag !== null && tags.some((t) => t.toLowerCase() === tag)) continue;
      absent++;
      if (keys.length < keep) keys.push(sourceKey);
    }
    if (page.length < PAGE) break;
    after = page[page.length - 1]!.sourceKey;
  }
  return { absent, keys };
}

/**
 * Unlinks or tags the absent accounts through the engine's account path (a tombstone, or the last
 * synced record with the tag added): counted, listed in the run, failed one by one like any record.
 */
async function deleteAccounts(
  ctx: PassScope,
  tags: TagResolver,
  unit: SourceUnit,
  snapshot: UnitSnapshot,
  keys: readonly string[],
): Promise<{ applied: number; failed: number }> {
  const counts = ctx.report.counts[STREAM_OF.account];
  const before = { updated: counts.updated, failed: counts.failed };
  const origin: RecordOrigin = { file: unit.name };
  for (let at = 0; at < keys.length; at += CHUNK) {
    const chunk = keys.slice(at, at + CHUNK);
    const stored = new Map(
      (await ctx.state.recordMap.storedRecords(ctx.sourceId, { kind: 'account', keys: chunk })).map((r) => [
        r.sourceKey,
        r.record as unknown as AccountRecord,
      ]),
    );
    const items: Array<{ record: AccountRecord; origin: RecordOrigin }> = [];
    for (const key of chunk) {
      const record = deletion(snapshot, key, stored.get(key));
      if (record !== null) items.push({ record, origin });
      else
        await recordFailure(
          ctx,
          'account',
          key,
          origin,
          fail(
            'snapshot',
            `absent from ${unit.name}, but what was last written of it is not stored, so it cannot be tagged; use onDelete: unlink, or tag it by hand`,
          ).reason,
          null,
        );
    }
    await syncAccounts(ctx, tags, items);
    await ctx.touched.flush();
    if (unit.failed) await unit.failed(ctx.report.takeUnitFailures());
  }
  return { applied: counts.updated - before.updated, failed: counts.failed - before.failed };
}

/** The record that deletes an absent account: a tombstone (unlink), or its last record tagged. */
function deletion(
  snapshot: UnitSnapshot,
  key: string,
  stored: AccountRecord | undefined,
): AccountRecord | null {
  if (snapshot.onDelete === 'unlink') {
    // Unlinking needs only the key and the API id the record map holds.
    return { ...(stored ?? emptyAccount(key)), sourceId: key, deleted: true };
  }
  if (stored === undefined || stored.kind !== 'account') return null;
  // The deletion is now: the source's lastUpdate is the time of this pass.
  return { ...stored, tags: [...(stored.tags ?? []), snapshot.deletedTag], updatedAt: null };
}

const emptyAccount = (sourceId: string): AccountRecord => ({
  kind: 'account',
  sourceId,
  fullName: '',
  currencyCode: '',
  billingAddress: { street: null, city: null, postalCode: null, country: null },
  tags: [],
  updatedAt: null,
});

const label = streamNoun;
const verb = (onDelete: UnitSnapshot['onDelete']): string =>
  onDelete === 'tag' ? 'tagged' : onDelete === 'unlink' ? 'unlinked' : 'deleted';
const percent = (ratio: number): string => `${Math.round(ratio * 1000) / 10} %`;

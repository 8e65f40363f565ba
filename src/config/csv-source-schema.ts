import { z } from 'zod';
import type { Stream } from '../domain/records.js';

/**
 * The per-kind settings of a `type: csv` source (`streams`), spread into its configuration entry.
 * A kind is `incremental` by default (a file adds and updates, never deletes). In `snapshot` mode
 * a file is the whole set of its kind: the records the source synced before and the file no longer
 * holds are handled like the SQL source's tombstones (docs/snapshots.md).
 *
 * @example
 *   sources:
 *     - id: crm-export
 *       type: csv
 *       dropDir: ./drop/crm
 *       streams:
 *         accounts:
 *           mode: snapshot
 *           onDelete: unlink      # or: tag (adds deletedTag), skip (only reported)
 *           maxDeleteRatio: 0.1   # more absent than this share of the held accounts: held, not applied
 *         invoices:
 *           mode: snapshot        # absent invoices are reported, never deleted
 */

/** What the SQL source does with a tombstone, and the CSV source with an absent account. */
export const ON_DELETE = ['unlink', 'tag', 'skip'] as const;
export type OnDelete = (typeof ON_DELETE)[number];

const mode = z.enum(['incremental', 'snapshot']).default('incremental');
const SNAPSHOT_ONLY = 'applies to "mode: snapshot" only (an incremental file never deletes)';

const accountStream = z
  .strictObject({
    mode,
    /** Default `unlink`: the account's source is removed (the account stays, unlinked). */
    onDelete: z.enum(ON_DELETE).optional(),
    /** The tag `onDelete: tag` adds (default `deleted-in-source`). */
    deletedTag: z.string().trim().min(1, 'a tag name is required').optional(),
    /**
     * The share of the source's linked accounts a file may leave out (default 0.1): above it, the
     * file is taken for a short export and no deletion is applied (they are held and reported).
     */
    maxDeleteRatio: z.number().min(0, 'between 0 and 1').max(1, 'between 0 and 1').optional(),
  })
  .superRefine((s, ctx) => {
    if (s.mode !== 'snapshot') {
      for (const key of ['onDelete', 'deletedTag', 'maxDeleteRatio'] as const)
        if (s[key] !== undefined) ctx.addIssue({ code: 'custom', path: [key], message: SNAPSHOT_ONLY });
    } else if (s.deletedTag !== undefined && s.onDelete !== 'tag') {
      ctx.addIssue({ code: 'custom', path: ['deletedTag'], message: 'is the tag of "onDelete: tag" only' });
    }
  });

const NEVER_DELETED =
  'documents are never deleted through the API: in snapshot mode the absent ones are only reported';

/** Invoices and credit notes: `mode` only; the deletion settings are refused with the reason. */
const documentStream = z
  .strictObject({
    mode,
    onDelete: z.unknown().optional(),
    deletedTag: z.unknown().optional(),
    maxDeleteRatio: z.unknown().optional(),
  })
  .superRefine((s, ctx) => {
    for (const key of ['onDelete', 'deletedTag', 'maxDeleteRatio'] as const)
      if (s[key] !== undefined)
        ctx.addIssue({ code: 'custom', path: [key], message: `not for this kind: ${NEVER_DELETED}` });
  })
  .transform(({ mode }) => ({ mode }));

export const CSV_SOURCE_FIELDS = {
  /** Per kind: `mode: incremental` (default) or `snapshot`, and what a snapshot does with absent rows. */
  streams: z
    .strictObject({
      accounts: accountStream.optional(),
      invoices: documentStream.optional(),
      creditNotes: documentStream.optional(),
    })
    .optional(),
};

const csvStreamsSchema = CSV_SOURCE_FIELDS.streams;
export type CsvStreamsSettings = z.output<typeof csvStreamsSchema>;

/** How a snapshot file treats the records of its kind it does not hold (defaults applied). */
export interface CsvSnapshotSettings {
  onDelete: OnDelete;
  deletedTag: string;
  maxDeleteRatio: number;
}

export const DEFAULT_DELETED_TAG = 'deleted-in-source';
export const DEFAULT_MAX_DELETE_RATIO = 0.1;

/**
 * The snapshot settings of a kind of the source, or null when the kind is incremental. Documents
 * are never deleted: their `onDelete` is `skip` (absent ones are reported).
 */
export function csvSnapshotSettings(
  streams: CsvStreamsSettings | undefined,
  stream: Stream,
): CsvSnapshotSettings | null {
  const settings = streams?.[stream];
  if (settings?.mode !== 'snapshot') return null;
  const account =
    stream === 'accounts' ? (settings as NonNullable<CsvStreamsSettings>['accounts']) : undefined;
  return {
    onDelete: stream === 'accounts' ? (account?.onDelete ?? 'unlink') : 'skip',
    deletedTag: account?.deletedTag ?? DEFAULT_DELETED_TAG,
    maxDeleteRatio: account?.maxDeleteRatio ?? DEFAULT_MAX_DELETE_RATIO,
  };
}

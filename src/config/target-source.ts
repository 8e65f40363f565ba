import { AppError } from '../domain/errors.js';
import type { SourceConfig } from './schema.js';

/**
 * The source `receivables-sync target` feeds: the one named, which must be a `type: singer` source
 * without `command`, or the only such source. The error says what to configure or to name.
 */
export function targetSourceOf(sources: readonly SourceConfig[], id: string | undefined): SourceConfig {
  const refuse = (message: string) => new AppError('TARGET_SOURCE_INVALID', message);
  if (id !== undefined) {
    const named = sources.find((s) => s.id === id);
    if (!named) throw refuse(`no source "${id}" in the configuration`);
    if (named.type !== 'singer')
      throw refuse(`source "${id}" is of type ${named.type}: \`target\` feeds a \`type: singer\` source`);
    if (named.command)
      throw refuse(
        `source "${id}" runs its own tap (command): \`target\` feeds a \`type: singer\` source configured without command`,
      );
    return named;
  }
  const fed = sources.filter((s) => s.type === 'singer' && !s.command);
  if (fed.length === 1) return fed[0]!;
  if (fed.length === 0)
    throw refuse(
      'no `type: singer` source without command in the configuration: add one for `target` to feed (docs/sources-singer.md)',
    );
  throw refuse(
    `several Singer sources can be fed (${fed.map((s) => s.id).join(', ')}): name one with --source`,
  );
}

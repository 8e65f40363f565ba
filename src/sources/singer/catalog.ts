import { SingerSourceError } from './errors.js';

interface CatalogEntry {
  tap_stream_id?: string;
  stream?: string;
  schema?: Record<string, unknown>;
  metadata?: Array<{ breadcrumb: string[]; metadata: Record<string, unknown> }>;
  [key: string]: unknown;
}

/**
 * The catalog a tap's `--discover` wrote, with the named streams selected and the others not: the
 * stream's own metadata entry (breadcrumb `[]`) gets `selected: true`, and so does each of its
 * fields that the tap does not mark `unsupported`, as singer-python's selection reads them; older
 * taps read `selected` on the stream's schema, set too.
 */
export function selectStreams(discovered: string, streams: readonly string[]): { streams: CatalogEntry[] } {
  let catalog: { streams?: unknown };
  try {
    catalog = JSON.parse(discovered) as { streams?: unknown };
  } catch (error) {
    throw new SingerSourceError(
      'SINGER_DISCOVERY_FAILED',
      `the tap's --discover output is not a JSON catalog (${(error as Error).message}); give the source a \`catalog\` file`,
    );
  }
  if (!Array.isArray(catalog.streams))
    throw new SingerSourceError(
      'SINGER_DISCOVERY_FAILED',
      'the tap\'s --discover output has no "streams" list',
    );
  const entries = catalog.streams as CatalogEntry[];
  const names = entries.map((e) => e.tap_stream_id ?? e.stream ?? '');
  const missing = streams.filter((s) => !names.includes(s));
  if (missing.length > 0)
    throw new SingerSourceError(
      'SINGER_DISCOVERY_FAILED',
      `the tap has no stream ${missing.map((m) => `"${m}"`).join(', ')} (its streams: ${names.join(', ')})`,
    );
  return {
    ...catalog,
    streams: entries.map((entry) => {
      const selected = streams.includes(entry.tap_stream_id ?? entry.stream ?? '');
      const metadata = [...(entry.metadata ?? [])].map((m) => {
        const unsupported = m.metadata.inclusion === 'unsupported';
        if (m.breadcrumb.length === 0) return { ...m, metadata: { ...m.metadata, selected } };
        return { ...m, metadata: { ...m.metadata, selected: selected && !unsupported } };
      });
      if (!metadata.some((m) => m.breadcrumb.length === 0))
        metadata.push({ breadcrumb: [], metadata: { selected } });
      const schema = entry.schema ? { ...entry.schema, selected } : entry.schema;
      return { ...entry, ...(schema ? { schema } : {}), metadata };
    }),
  };
}

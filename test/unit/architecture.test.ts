import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The layering of `src/`, checked on every `npm test`: which top-level folder may import which.
 * Lower floors never import higher ones; ports are declared by their consumer (`sync/ports.ts`,
 * `sources/ports.ts`) and implemented structurally by `state/` without importing them; `app/` is
 * the composition root that wires everything, and only the entry points (`cli/`) call it.
 * A new edge is a design decision: add it here with the reason, or move the code.
 */
const ALLOWED: Readonly<Record<string, readonly string[]>> = {
  domain: [],
  logging: [],
  // The record contract (columns, typed records, their checks), the same for every source.
  records: ['domain'],
  // The source settings are checked against the record contract's columns.
  config: ['domain', 'records'],
  // Payloads are shaped as the API's request types.
  mapping: ['domain', 'api'],
  api: ['domain', 'config', 'logging'],
  sources: ['domain', 'config', 'logging', 'mapping', 'records'],
  state: ['domain', 'logging'],
  sync: ['domain', 'config', 'logging', 'mapping', 'sources'],
  // Reconciliation compares the service with the record map and repairs through the sync engine.
  reconcile: ['domain', 'sync'],
  // Alerts are told from the sync's edges (app/) and delivered by jobs/; they know no sync, state or API.
  alerts: ['domain', 'config', 'logging'],
  // The alerts' queue carries their events; its worker delivers them.
  jobs: ['domain', 'config', 'logging', 'sync', 'alerts'],
  metrics: ['domain', 'logging', 'api', 'sync'],
  // The dashboard reads status from the state DB and queues jobs through the queues' interface.
  dashboard: ['domain', 'config', 'logging', 'state', 'jobs', 'metrics'],
  // An independent implementation of the spec: shares nothing with the client but plain helpers.
  sandbox: ['domain'],
  app: [
    'alerts',
    'records',
    'domain',
    'config',
    'logging',
    'mapping',
    'api',
    'sources',
    'state',
    'sync',
    'reconcile',
    'jobs',
    'metrics',
    'dashboard',
  ],
  cli: ['app', 'domain', 'config', 'logging', 'api', 'state', 'sync', 'sandbox'],
};

/** Edges the design forbids outright, whatever the table above says (named by the issue that set them). */
const FORBIDDEN: ReadonlyArray<[string, string]> = [
  ['jobs', 'cli'],
  ['jobs', 'dashboard'],
  ['state', 'sources'],
  ['sources', 'state'],
  ['state', 'sync'],
  // Alerts are told what happened; they never reach into the state DB, the API or the queues.
  ['alerts', 'state'],
  ['alerts', 'api'],
  ['alerts', 'jobs'],
];

const SRC = join(dirname(fileURLToPath(import.meta.url)), '../../src');

/** A file's code, its comments left out. */
const codeOf = (file: string): string =>
  readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');

/**
 * A comparison of a source config's `type` with a source type (either side of `===`, `!==`, `==`,
 * `!=`) or a `case` of one: only `sources/` (its description and factory) and `config/` branch on it.
 */
const SOURCE_TYPE_TEST =
  /\btype\s*[!=]==?\s*['"](?:csv|sql|module)['"]|['"](?:csv|sql|module)['"]\s*[!=]==?\s*[\w.?]*\btype\b|\bcase\s+['"](?:csv|sql|module)['"]/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const topFolder = (path: string): string => relative(SRC, path).split(/[\\/]/)[0]!.replace(/\.ts$/, '');

/** Relative imports and re-exports (static and dynamic) of a file, comments left out. */
function importsOf(text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const specs = [
    ...code.matchAll(/\b(?:import|export)\s[^'"]*?\sfrom\s+['"](\.[^'"]+)['"]/g),
    ...code.matchAll(/\bimport\s*\(\s*['"](\.[^'"]+)['"]\s*\)/g),
    ...code.matchAll(/\bimport\s+['"](\.[^'"]+)['"]/g),
  ];
  return specs.map((m) => m[1]!);
}

interface Edge {
  from: string;
  to: string;
  file: string;
  spec: string;
}

function edges(): Edge[] {
  const out: Edge[] = [];
  for (const file of sourceFiles(SRC)) {
    const from = topFolder(file);
    for (const spec of importsOf(readFileSync(file, 'utf8'))) {
      const target = normalize(join(dirname(file), spec));
      if (relative(SRC, target).startsWith('..')) continue;
      const to = topFolder(target);
      if (to !== from) out.push({ from, to, file: relative(SRC, file), spec });
    }
  }
  return out;
}

describe('the layering of src/', () => {
  const all = edges();

  it('when the tree is read, then it finds the imports between folders (the check cannot pass empty)', () => {
    expect(all.length).toBeGreaterThan(100);
    expect(all.some((e) => e.from === 'app' && e.to === 'sync')).toBe(true);
    expect(
      importsOf("import { a } from './x.js';\n// import { b } from '../y.js';\nexport * from '../z.js';"),
    ).toEqual(['./x.js', '../z.js']);
  });

  it('when a folder imports another, then the edge is one the design allows', () => {
    const folders = new Set(all.flatMap((e) => [e.from, e.to]));
    for (const folder of folders)
      expect(Object.keys(ALLOWED), `folder src/${folder} has no rule`).toContain(folder);
    const refused = all
      .filter((e) => !ALLOWED[e.from]?.includes(e.to))
      .map((e) => `${e.file} imports ${e.spec} (${e.from} -> ${e.to})`);
    expect(refused).toEqual([]);
  });

  it('when jobs, state or sources import, then never the floors the design forbids them', () => {
    const refused = all
      .filter((e) => FORBIDDEN.some(([from, to]) => e.from === from && e.to === to))
      .map((e) => `${e.file} imports ${e.spec}`);
    expect(refused).toEqual([]);
    for (const [from, to] of FORBIDDEN) expect(ALLOWED[from]).not.toContain(to);
  });

  it('when a source adapter imports, then never another adapter (they share the record contract in records/)', () => {
    const adapterOf = (path: string): string | null => {
      const parts = relative(SRC, path).split(/[\\/]/);
      return parts[0] === 'sources' && parts.length > 2 ? parts[1]! : null;
    };
    const crossings: string[] = [];
    let adapterImports = 0;
    for (const file of sourceFiles(SRC)) {
      const from = adapterOf(file);
      if (from === null) continue;
      for (const spec of importsOf(readFileSync(file, 'utf8'))) {
        const to = adapterOf(normalize(join(dirname(file), spec)));
        if (to !== null) adapterImports++;
        if (to !== null && to !== from) crossings.push(`${relative(SRC, file)} imports ${spec}`);
      }
    }
    expect(adapterImports).toBeGreaterThan(20);
    expect(crossings).toEqual([]);
  });

  it('when code reads the environment, then it is in config/ (the sandbox reads none either)', () => {
    const readers = sourceFiles(SRC)
      .filter((file) => topFolder(file) !== 'config')
      .filter((file) => {
        const code = codeOf(file);
        return /\bprocess\s*\.\s*env\b|\bprocess\s*\[\s*['"]env['"]\s*\]/.test(code);
      })
      .map((file) => relative(SRC, file));
    expect(readers).toEqual([]);
  });

  it('when code outside sources/ and config/ needs something of a source type, then it asks the source description, never compares its `type`', () => {
    const branching = (file: string): string[] =>
      codeOf(file)
        .split('\n')
        .filter((line) => SOURCE_TYPE_TEST.test(line))
        .map((line) => `${relative(SRC, file)}: ${line.trim()}`);
    const owners = new Set(['sources', 'config']);
    const inside = sourceFiles(SRC)
      .filter((file) => owners.has(topFolder(file)))
      .flatMap(branching);
    // The check cannot pass empty: it finds where sources/ picks by type, and each form it refuses.
    expect(inside.some((line) => line.startsWith('sources/describe-source.ts'))).toBe(true);
    for (const line of [
      "if (source.type === 'csv')",
      'c.type !== "sql"',
      "'module' == config.type",
      "case 'csv':",
    ])
      expect(SOURCE_TYPE_TEST.test(line), line).toBe(true);
    for (const line of ["reply.type('text/csv')", "if (event.type === 'unit')", "format === 'csv'"])
      expect(SOURCE_TYPE_TEST.test(line), line).toBe(false);
    const outside = sourceFiles(SRC)
      .filter((file) => !owners.has(topFolder(file)))
      .flatMap(branching);
    expect(outside).toEqual([]);
  });
});

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

/** Sibling folders that are adapters of one port (issue 29); `all`: every subfolder of it. */
const SIBLING_ADAPTERS: Readonly<Record<string, 'all' | readonly string[]>> = {
  sources: 'all',
  api: ['auth', 'endpoints'],
};

/** The adapter a file (relative to src/) belongs to, as `sources/csv`; null outside the adapters. */
function adapterOf(file: string): string | null {
  const [top, sub, ...rest] = file.split(/[\\/]/);
  const siblings = top === undefined ? undefined : SIBLING_ADAPTERS[top];
  if (!siblings || sub === undefined || rest.length === 0) return null;
  return siblings === 'all' || siblings.includes(sub) ? `${top}/${sub}` : null;
}

const resolveSpec = (file: string, spec: string): string => normalize(join(dirname(file), spec));

/** The imports of `file` (relative to src/) that reach into a sibling adapter. */
function adapterCrossings(file: string, text: string): string[] {
  const from = adapterOf(file);
  if (from === null) return [];
  return importsOf(text)
    .filter((spec) => {
      const to = adapterOf(resolveSpec(file, spec));
      return to !== null && to !== from;
    })
    .map((spec) => `${file} imports ${spec}`);
}

/**
 * A file's code with comments left out and the text of its string and template literals blanked
 * (an interpolation's code kept), so brackets can be matched and words found in the code alone.
 */
function skeletonOf(text: string): string {
  let out = '';
  /** Per open template: the depth of `{` of its current interpolation, or -1 inside its text. */
  const templates: number[] = [];
  let quote: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    const inTemplateText = templates.length > 0 && templates[templates.length - 1] === -1;
    if (quote !== null || inTemplateText) {
      if (c === '\\') {
        out += '  ';
        i++;
      } else if (quote !== null && c === quote) {
        out += c;
        quote = null;
      } else if (inTemplateText && c === '`') {
        out += c;
        templates.pop();
      } else if (inTemplateText && c === '$' && text[i + 1] === '{') {
        out += '${';
        i++;
        templates[templates.length - 1] = 0;
      } else {
        out += c === '\n' ? '\n' : ' ';
      }
      continue;
    }
    if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      out += '\n';
      continue;
    }
    if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end === -1 ? text.length : end + 1;
      out += ' ';
      continue;
    }
    if (c === "'" || c === '"') quote = c;
    else if (c === '`') templates.push(-1);
    else if (templates.length > 0 && c === '{') templates[templates.length - 1]!++;
    else if (templates.length > 0 && c === '}') {
      const depth = templates[templates.length - 1]!;
      if (depth === 0) templates[templates.length - 1] = -1;
      else templates[templates.length - 1] = depth - 1;
    }
    out += c;
  }
  return out;
}

/** The callee of the call whose argument list holds position `at` (`new X`, `a.b`, `f`), if any. */
function calleeAround(code: string, at: number): string | null {
  let depth = 0;
  for (let i = at - 1; i >= 0; i--) {
    const c = code[i]!;
    if (c === ')' || c === ']' || c === '}') depth++;
    else if (c === '[' || c === '{') depth = Math.max(0, depth - 1);
    else if (c === '(') {
      if (depth > 0) {
        depth--;
        continue;
      }
      return /(?:\bnew\s+)?([\w$.]+)\s*$/.exec(code.slice(0, i))?.[1] ?? null;
    }
  }
  return null;
}

/** Whether position `at` is a member of an interface or a type literal (`fetch: typeof fetch` declares, never hands). */
function inTypeDeclaration(code: string, at: number): boolean {
  let depth = 0;
  for (let i = at - 1; i >= 0; i--) {
    const c = code[i]!;
    if (c === '}') depth++;
    else if (c === '{' && depth > 0) depth--;
    else if (c === '{')
      return /(?:\binterface\s+[\w$]+(?:<[^{]*>)?(?:\s+extends\s[^{]*)?|\btype\s+[\w$]+(?:<[^{]*>)?\s*=)\s*$/.test(
        code.slice(0, i),
      );
  }
  return false;
}

/**
 * How a doctor file reaches the network without the client: a call of a fetch (`fetch(`,
 * `fetchImpl(`, `context.fetch(`), or a `fetch` option handed to anything but what it imports
 * from the API client (`api/client.js`) and the auth module (`api/auth/`).
 */
function doctorFetchUses(text: string): string[] {
  const code = skeletonOf(text);
  const allowed = new Set(
    [...code.matchAll(/\bimport\s*(?:type\s*)?\{([^}]*)\}\s*from\s*['"]([^'"]+)['"]/g)]
      .filter((m) => /(?:^|\/)api\/(?:client\.js$|auth\/)/.test(importPathOf(text, m.index)))
      .flatMap((m) =>
        m[1]!.split(',').map(
          (name) =>
            name
              .trim()
              .split(/\s+as\s+/)
              .pop()!,
        ),
      ),
  );
  const uses: string[] = [];
  for (const m of code.matchAll(/\b[\w$.]*fetch\w*\s*\(/gi))
    uses.push(`calls ${m[0].replace(/\s*\($/, '')}(...)`);
  for (const m of code.matchAll(/[{,]\s*fetch\s*(?=[:,}])/g)) {
    if (inTypeDeclaration(code, m.index + 1)) continue;
    const callee = calleeAround(code, m.index);
    const name = callee?.split('.').pop() ?? null;
    if (name === null || !allowed.has(name)) uses.push(`hands a fetch to ${callee ?? 'an object'}`);
  }
  return uses;
}

/** The module of the import statement at `index` of `text` (the skeleton blanks it). */
function importPathOf(text: string, index: number): string {
  return /from\s*['"]([^'"]+)['"]/.exec(text.slice(index))?.[1] ?? '';
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

  // Issue 29: adapters do not import each other. Each source adapter (csv/, sql/, singer/, module/)
  // implements sources/source.ts and shares the record contract through records/; in api/, the auth
  // module (the token providers behind auth/types.ts) and the endpoint groups (behind the
  // `Requester` of requests.ts) meet only in client.ts and transport.ts. api/rate-limit/ is no adapter:
  // the transport and the token endpoint's own budget (auth/) both use it.
  it('when an adapter imports, then never a sibling adapter (they meet through their port)', () => {
    // The check cannot pass empty: it sees the adapters' imports, and a crossing of each kind.
    const files = sourceFiles(SRC).map((file) => ({
      file: relative(SRC, file),
      text: readFileSync(file, 'utf8'),
    }));
    const adapterImports = files.flatMap(({ file, text }) =>
      adapterOf(file) === null ? [] : importsOf(text).filter((spec) => adapterOf(resolveSpec(file, spec))),
    );
    expect(adapterImports.length).toBeGreaterThan(20);
    expect(adapterCrossings('sources/csv/reader.ts', "import { x } from '../sql/dialects.js';")).toEqual([
      'sources/csv/reader.ts imports ../sql/dialects.js',
    ]);
    expect(adapterCrossings('api/endpoints/a.ts', "import type { T } from '../auth/types.js';")).toHaveLength(
      1,
    );
    expect(
      adapterCrossings(
        'api/auth/token-endpoint.ts',
        "import { a } from '../rate-limit/headers.js';\nimport { b } from '../transport.js';",
      ),
    ).toEqual([]);
    expect(files.flatMap(({ file, text }) => adapterCrossings(file, text))).toEqual([]);
  });

  // Issue 29: doctor uses the client. Its Public API requests go through `ReceivablesClient` (the
  // shared rate limiter, the token's quota, the transport `--trace-http` records); the fetch it is
  // given goes only to the client and to the auth module (discovery, the token endpoint).
  it('when doctor checks the API, then through the client: no fetch call, and a fetch handed only to the client or the auth module', () => {
    const doctorFiles = sourceFiles(join(SRC, 'app')).filter((file) => /[\\/]doctor[^\\/]*\.ts$/.test(file));
    expect(doctorFiles.length).toBeGreaterThan(1);
    // The check cannot pass empty: each form it refuses, and the forms it allows.
    expect(doctorFetchUses('const r = await fetchImpl(url, { headers });')).toHaveLength(1);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the code under check holds a template.
    expect(doctorFetchUses('await context.fetch(`${context.api}${path}`, { method });')).toHaveLength(1);
    expect(
      doctorFetchUses(
        "import { probe } from './doctor-compat.js';\nawait probe({ api, token, fetch: fetchImpl }, compat);",
      ),
    ).toHaveLength(1);
    expect(
      doctorFetchUses(
        [
          "import { ReceivablesClient } from '../api/client.js';",
          "import { discover } from '../api/auth/discovery.js';",
          // biome-ignore lint/suspicious/noTemplateCurlyInString: the code under check holds a template.
          "const label = `a (fetch) in ${'text'} (x`; // a fetch( in a comment",
          'const client = new ReceivablesClient({ baseUrl, fetch: options.fetch, timeoutMs });',
          'const found = await discover({ baseUrl, fetch });',
          'interface Access {\n  fetch: typeof fetch;\n}',
        ].join('\n'),
      ),
    ).toEqual([]);
    const refused = doctorFiles.flatMap((file) =>
      doctorFetchUses(readFileSync(file, 'utf8')).map((use) => `${relative(SRC, file)}: ${use}`),
    );
    expect(refused).toEqual([]);
    expect(doctorFiles.some((file) => /\bnew\s+ReceivablesClient\s*\(/.test(codeOf(file)))).toBe(true);
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

import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { closest, distance } from 'fastest-levenshtein';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import { AppError } from '../domain/errors.js';
import { packageRoot } from './paths.js';
import { type Config, configSchema, type Secrets } from './schema.js';

/** Every problem of a configuration, listed in one message. Exit code 1. */
export class ConfigError extends AppError {
  constructor(
    readonly file: string | null,
    readonly problems: string[],
  ) {
    super(
      'CONFIG_INVALID',
      `Invalid configuration${file ? ` in ${file}` : ''}:\n${problems.map((p) => `  - ${p}`).join('\n')}`,
    );
  }
}

export interface LoadedConfig {
  config: Config;
  secrets: Secrets;
  /**
   * The environment the configuration was read from: what SQL sources (`urlEnv`) and module
   * sources (`context.env`) read, so nothing outside `config/` reads `process.env`.
   */
  env: Env;
  /** The file read over the defaults, or null when only defaults and env were used. */
  file: string | null;
}

type Env = Readonly<Record<string, string | undefined>>;

const DEFAULTS_FILE = join(packageRoot(), 'config', 'default.yaml');
/** The configuration file read from the working folder when no other is named. */
export const CONFIG_FILE_NAME = 'receivables-sync.yaml';

/** The file to read: --config, else RECEIVABLES_SYNC_CONFIG, else ./receivables-sync.yaml if present. */
export function configFilePath(explicit: string | undefined, env: Env, cwd: string): string | null {
  const chosen = explicit ?? env.RECEIVABLES_SYNC_CONFIG;
  if (chosen) return resolve(cwd, chosen);
  const local = join(cwd, CONFIG_FILE_NAME);
  return existsSync(local) ? local : null;
}

/**
 * Loads the configuration: built-in defaults, then the user's file, then environment overrides,
 * validated once against one schema. Only `config/` reads `process.env` (here, and NODE_OPTIONS in
 * `node-options.ts`).
 */
export function loadConfig(
  options: { file?: string | undefined; env?: Env; cwd?: string } = {},
): LoadedConfig {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const file = configFilePath(options.file, env, cwd);
  const defaults = readYaml(DEFAULTS_FILE) as Record<string, unknown>;
  const user = file ? readYaml(file) : {};
  if (user !== null && (typeof user !== 'object' || Array.isArray(user))) {
    throw new ConfigError(file, ['the file must hold a YAML mapping (key: value)']);
  }
  const merged = applyEnv(mergeDeep(defaults, (user ?? {}) as Record<string, unknown>), env);
  const result = configSchema.safeParse(merged);
  // Duplicate ids are checked on the raw input so they are listed even when other problems exist.
  const problems = [
    ...(result.success ? [] : formatIssues(result.error.issues, merged)),
    ...duplicateSourceIds(merged.sources),
    ...(result.success ? unknownConnections(result.data) : []),
  ];
  if (!result.success || problems.length > 0) throw new ConfigError(file, problems);
  const config = resolvePaths(result.data, file ? dirname(file) : cwd);
  return {
    config,
    file,
    env,
    secrets: {
      accessToken: env.RECEIVABLES_ACCESS_TOKEN || undefined,
      refreshToken: env.RECEIVABLES_REFRESH_TOKEN || undefined,
      dashboardUser: env.DASHBOARD_USER || undefined,
      dashboardPassword: env.DASHBOARD_PASSWORD || undefined,
      tokenKey: env.RECEIVABLES_TOKEN_KEY || undefined,
    },
  };
}

function readYaml(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(path, [`cannot read the file: ${(error as Error).message}`]);
  }
  try {
    return parseYaml(text) ?? {};
  } catch (error) {
    throw new ConfigError(path, [`not valid YAML: ${(error as Error).message}`]);
  }
}

/** Objects merge key by key; arrays and scalars from `over` replace those of `base`. */
function mergeDeep(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const prior = out[key];
    const bothObjects = isPlainObject(prior) && isPlainObject(value);
    out[key] = bothObjects ? mergeDeep(prior, value) : value;
  }
  return out;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The environment variables of the contract, each onto its config key. */
const ENV_KEYS: ReadonlyArray<[string, readonly string[], 'string' | 'number']> = [
  ['RECEIVABLES_BASE_URL', ['api', 'baseUrl'], 'string'],
  ['RECEIVABLES_ORGANIZATION_ID', ['api', 'organizationId'], 'string'],
  ['RECEIVABLES_CLIENT_ID', ['auth', 'clientId'], 'string'],
  ['DATABASE_URL', ['state', 'databaseUrl'], 'string'],
  ['DATABASE_SCHEMA', ['state', 'schema'], 'string'],
  ['REDIS_URL', ['queue', 'redisUrl'], 'string'],
  ['DASHBOARD_HOST', ['dashboard', 'host'], 'string'],
  ['DASHBOARD_PORT', ['dashboard', 'port'], 'number'],
  ['DASHBOARD_TRUST_PROXY', ['dashboard', 'trustProxy'], 'string'],
  ['LOG_LEVEL', ['log', 'level'], 'string'],
  ['LOG_FORMAT', ['log', 'format'], 'string'],
];

function applyEnv(config: Record<string, unknown>, env: Env): Record<string, unknown> {
  for (const [name, [section, key], kind] of ENV_KEYS) {
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    const target = (isPlainObject(config[section!]) ? config[section!] : {}) as Record<string, unknown>;
    target[key!] = kind === 'number' && /^\d+$/.test(raw) ? Number(raw) : raw;
    config[section!] = target;
  }
  return config;
}

function formatIssues(issues: readonly z.core.$ZodIssue[], input: Record<string, unknown>): string[] {
  return issues.map((issue) => {
    const where = issue.path.length > 0 ? issue.path.join('.') : '(root)';
    return `${describeIssue(issue, where)}${entryIdOf(input, issue.path)}`;
  });
}

function describeIssue(issue: z.core.$ZodIssue, where: string): string {
  if (issue.code === 'unrecognized_keys') {
    const known = keysAt(configSchema, issue.path);
    const hints = issue.keys.map((key) => {
      const near = nearestKey(key, known);
      return near ? `"${key}" (did you mean "${near}"?)` : `"${key}"`;
    });
    return `${where}: unknown key${issue.keys.length > 1 ? 's' : ''} ${hints.join(', ')}`;
  }
  return `${where}: ${issue.message}`;
}

/**
 * ` (in source "billing-db")` when `path` is inside an entry of `sources:` or `connections:` that has
 * an id, so a problem names the entry as the user knows it, not only by its position.
 */
function entryIdOf(input: Record<string, unknown>, path: readonly PropertyKey[]): string {
  const [list, index] = path;
  if ((list !== 'sources' && list !== 'connections') || typeof index !== 'number') return '';
  const entries = input[list];
  const id = Array.isArray(entries) ? (entries[index] as { id?: unknown } | undefined)?.id : undefined;
  if (typeof id !== 'string' || id === '') return '';
  return ` (in ${list === 'sources' ? 'source' : 'connection'} "${id}")`;
}

/** The keys an object of the schema takes at `path` (every option's, under a union); [] when unknown. */
function keysAt(schema: z.core.$ZodType, path: readonly PropertyKey[]): string[] {
  let at: z.core.$ZodType | undefined = schema;
  for (const segment of path) {
    at = unwrapped(at);
    const def = at?._zod.def;
    if (def?.type === 'object') at = (def as z.core.$ZodObjectDef).shape[String(segment)];
    else if (def?.type === 'array') at = (def as z.core.$ZodArrayDef).element;
    else if (def?.type === 'union')
      // A source entry is one of several shapes (csv, sql, module): the one that has the key.
      at = (def as z.core.$ZodUnionDef).options
        .map((option) => unwrapped(option)?._zod.def)
        .flatMap((option) => (option?.type === 'object' ? [(option as z.core.$ZodObjectDef).shape] : []))
        .find((shape) => String(segment) in shape)?.[String(segment)];
    else return [];
  }
  const found = unwrapped(at);
  const def = found?._zod.def;
  if (def?.type === 'object') return Object.keys((def as z.core.$ZodObjectDef).shape);
  if (def?.type === 'union')
    return [...new Set((def as z.core.$ZodUnionDef).options.flatMap((option) => keysAt(option, [])))];
  return [];
}

/**
 * Through `.default()`, `.prefault()`, `.optional()`, `.nullable()` to the schema they wrap, and
 * through a `.transform()` / `z.preprocess()` pipe to the schema that reads the input.
 */
function unwrapped(schema: z.core.$ZodType | undefined): z.core.$ZodType | undefined {
  let at = schema;
  for (;;) {
    const type = at?._zod.def.type;
    if (type && ['default', 'prefault', 'optional', 'nullable', 'readonly'].includes(type))
      at = (at!._zod.def as unknown as { innerType: z.core.$ZodType }).innerType;
    else if (type === 'pipe') {
      const pipe = at!._zod.def as unknown as { in: z.core.$ZodType; out: z.core.$ZodType };
      // A preprocess pipes a transform into the schema; a transform pipes the schema into one.
      at = pipe.in._zod.def.type === 'transform' ? pipe.out : pipe.in;
    } else return at;
  }
}

/** The known key a typo most likely meant: at most 2 edits, and fewer than a third of it. */
function nearestKey(key: string, known: readonly string[]): string | null {
  if (known.length === 0) return null;
  const best = closest(key, [...known]);
  const edits = distance(key, best);
  return edits <= 2 && edits * 3 < best.length ? best : null;
}

/** Relative paths in the file are relative to the file, not to the current directory. */
function resolvePaths(config: Config, base: string): Config {
  const abs = (p: string) => (isAbsolute(p) ? p : resolve(base, p));
  return {
    ...config,
    state: { ...config.state, dataDir: abs(config.state.dataDir) },
    sources: config.sources.map((s) => {
      if (s.type === 'csv') return { ...s, dropDir: abs(s.dropDir) };
      if (s.type === 'sql') return s.filesDir ? { ...s, filesDir: abs(s.filesDir) } : s;
      if (s.type === 'singer')
        return {
          ...s,
          cwd: abs(s.cwd ?? '.'),
          ...(s.config ? { config: abs(s.config) } : {}),
          ...(s.catalog ? { catalog: abs(s.catalog) } : {}),
        };
      // A module path (./x.js, ../y.ts) is relative to the file; a bare name is a package.
      return /^\.\.?[\\/]/.test(s.module) || /\.(m?js|cjs|ts)$/.test(s.module)
        ? { ...s, module: abs(s.module) }
        : s;
    }),
  };
}

/** A source's `connection` must name one of `connections:` (or `default`, the `api:` keys'). */
function unknownConnections(config: Config): string[] {
  const known = ['default', ...config.connections.map((c) => c.id)];
  return config.sources.flatMap((source, index) =>
    source.connection === undefined || known.includes(source.connection)
      ? []
      : [
          `sources.${index}.connection: unknown connection "${source.connection}" (known: ${known.join(', ')})`,
        ],
  );
}

function duplicateSourceIds(sources: unknown): string[] {
  if (!Array.isArray(sources)) return [];
  const seen = new Set<unknown>();
  const problems: string[] = [];
  for (const [index, source] of sources.entries()) {
    const id = isPlainObject(source) ? source.id : undefined;
    if (id === undefined) continue;
    if (seen.has(id)) problems.push(`sources.${index}.id: duplicate source id "${String(id)}"`);
    seen.add(id);
  }
  return problems;
}

/**
 * The configured sources, or an error that says how to configure one: the built-in defaults
 * define none, so `sync` and `worker` never push sample data to a service by accident.
 */
export function requireSources(loaded: LoadedConfig): Config['sources'] {
  if (loaded.config.sources.length > 0) return loaded.config.sources;
  throw new AppError('NO_SOURCE', noSourceMessage(loaded));
}

/** Why no source is configured (which file, or that none was found) and how to configure one. */
export function noSourceMessage(loaded: LoadedConfig): string {
  const where = loaded.file
    ? `${loaded.file} defines no source`
    : 'no configuration file was found (--config FILE, RECEIVABLES_SYNC_CONFIG, or ./receivables-sync.yaml)';
  return (
    `no source is configured: ${where}. Add a \`sources:\` entry (see the README, "Sources"), ` +
    'or run `receivables-sync demo` (npm run demo) to try the sample drop folder against a local sandbox'
  );
}

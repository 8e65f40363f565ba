/**
 * docker-compose.yml as compose reads it, without Docker: parsed, and every string interpolated
 * from a given environment (`${VAR}`, `${VAR:-default}`, `${VAR:?message}`, which fails when unset
 * or empty, as compose refuses to start).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { REPO_ROOT } from './cli.js';

export interface ComposeService {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  restart?: string;
  stop_grace_period?: string;
  init?: boolean;
  profiles?: string[];
  healthcheck?: { test: string[] | string };
  depends_on?: Record<string, unknown> | string[];
  [key: string]: unknown;
}

export interface ComposeFile {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}

/** Compose's interpolation of one string. */
export function interpolate(text: string, env: Record<string, string | undefined>): string {
  return text.replace(/\$\{(\w+)(?::([-?])([^}]*))?\}/g, (_, name: string, op?: string, arg?: string) => {
    const value = env[name];
    if (value !== undefined && value !== '') return value;
    if (op === '?') throw new Error(`compose refuses: ${arg}`);
    return op === '-' ? (arg ?? '') : '';
  });
}

function interpolated(value: unknown, env: Record<string, string | undefined>): unknown {
  if (typeof value === 'string') return interpolate(value, env);
  if (Array.isArray(value)) return value.map((v) => interpolated(v, env));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolated(v, env)]));
  return value;
}

/** The whole file, interpolated from `env`. */
export function composeFile(env: Record<string, string | undefined>): ComposeFile {
  const parsed = parseYaml(readFileSync(join(REPO_ROOT, 'docker-compose.yml'), 'utf8')) as ComposeFile;
  return interpolated(parsed, env) as ComposeFile;
}

/** One service of the file, interpolated from `env`, with its environment's values as strings. */
export function composeService(name: string, env: Record<string, string | undefined>) {
  const service = composeFile(env).services[name];
  if (!service) throw new Error(`docker-compose.yml has no service ${name}`);
  return {
    ...service,
    environment: Object.fromEntries(
      Object.entries(service.environment ?? {}).map(([k, v]) => [k, String(v)]),
    ) as Record<string, string>,
    volumes: (service.volumes ?? []).map(String),
    command: (service.command ?? []).map(String),
  };
}

/** A compose duration (`40s`, `1m30s`, `1h`) in seconds. */
export function durationSeconds(text: string): number {
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(h|m|s|ms|us)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text)
    throw new Error(`not a duration: ${text}`);
  const unit = { h: 3600, m: 60, s: 1, ms: 0.001, us: 0.000_001 } as const;
  return parts.reduce((sum, [, n, u]) => sum + Number(n) * unit[u as keyof typeof unit], 0);
}

/**
 * What node was started with through NODE_OPTIONS (a user's own heap sizes among them, which the
 * CLI's heap settings leave alone: src/cli/heap-growth.ts). Its own module, without the
 * configuration's schema: the CLI reads it before loading anything else.
 */
export function nodeOptions(env: Readonly<Record<string, string | undefined>> = process.env): string {
  return env.NODE_OPTIONS ?? '';
}

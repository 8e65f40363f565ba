import { randomBytes } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import { access, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { LoadedConfig } from '../config/load.js';
import type { SourceConfig } from '../config/schema.js';
import { systemClock } from '../domain/clock.js';
import { messageOf } from '../domain/errors.js';
import { createLogger } from '../logging/logger.js';
import { DropFolder } from '../sources/csv/drop-folder.js';
import { loadModuleSource } from '../sources/module/module-loader.js';
import { probeQuery } from '../sources/sql/keyset-query.js';
import { connectPg } from '../sources/sql/pg-session.js';
import { type DoctorCheck, fail, ok } from './doctor.js';

/**
 * `doctor`'s checks of one source, writing nothing it keeps: a drop folder exists and a file can be
 * renamed in it (claims are renames), a SQL source connects and each stream's query compiles
 * (`LIMIT 0`), a module source loads.
 */
export async function sourceCheck(source: SourceConfig, loaded: LoadedConfig): Promise<DoctorCheck> {
  const name = `source ${source.id}`;
  try {
    if (source.type === 'csv') return await dropFolderCheck(name, resolve(source.dropDir));
    if (source.type === 'sql') return await sqlCheck(name, source, loaded);
    return await moduleCheck(name, source, loaded);
  } catch (error) {
    return fail(name, messageOf(error));
  }
}

/** Exists, readable, and a file can be renamed in it (claims are renames). */
async function dropFolderCheck(name: string, dir: string): Promise<DoctorCheck> {
  try {
    const info = await stat(dir);
    if (!info.isDirectory()) return fail(name, `${dir} is not a folder`);
  } catch {
    return fail(name, `the drop folder ${dir} does not exist: create it (mkdir -p) or fix dropDir`);
  }
  try {
    await access(dir, fsConstants.R_OK | fsConstants.W_OK);
    // A name nobody can plant ahead, created new ('wx' never follows or truncates a link there).
    const probe = join(dir, `.doctor-${process.pid}-${randomBytes(6).toString('hex')}.tmp`);
    await writeFile(probe, '', { flag: 'wx' });
    await rename(probe, `${probe}.moved`);
    await rm(`${probe}.moved`, { force: true });
  } catch (error) {
    return fail(
      name,
      `the drop folder ${dir} is not writable (${messageOf(error)}): files are claimed by renaming them`,
    );
  }
  try {
    await new DropFolder(dir, systemClock).checkWorkingFolders();
  } catch (error) {
    return fail(name, messageOf(error));
  }
  return ok(name, `drop folder ${dir}: exists, writable, its working folders real folders`);
}

async function sqlCheck(
  name: string,
  source: Extract<SourceConfig, { type: 'sql' }>,
  loaded: LoadedConfig,
): Promise<DoctorCheck> {
  const url = loaded.env[source.urlEnv];
  if (!url) return fail(name, `${source.urlEnv} is not set: it holds the billing database's URL`);
  const session = await connectPg(url, createLogger({ level: 'silent' }));
  try {
    const streams = Object.entries(source.streams).filter(([, stream]) => stream !== undefined);
    for (const [stream, settings] of streams) {
      try {
        await session.query(probeQuery((settings as { query: string }).query));
      } catch (error) {
        return fail(name, `the ${stream} query does not compile: ${messageOf(error)}`);
      }
    }
    return ok(
      name,
      `connects; ${streams.map(([s]) => s).join(', ') || 'no'} stream queries compile (limit 0)`,
    );
  } finally {
    await session.end();
  }
}

async function moduleCheck(
  name: string,
  source: Extract<SourceConfig, { type: 'module' }>,
  loaded: LoadedConfig,
): Promise<DoctorCheck> {
  const baseDir = loaded.file ? resolve(loaded.file, '..') : process.cwd();
  await loadModuleSource({
    sourceId: source.id,
    specifier: source.module,
    baseDir,
    options: source.options ?? {},
    context: {
      sourceId: source.id,
      logger: createLogger({ level: 'silent' }),
      clock: { now: () => new Date() },
      env: loaded.env,
      moduleDir: baseDir,
      cursors: { get: async () => null, set: async () => {} },
    },
  });
  return ok(name, `module ${source.module} loads`);
}

import { resolve } from 'node:path';
import type { LoadedConfig } from '../config/load.js';
import type { SourceConfig } from '../config/schema.js';
import { messageOf } from '../domain/errors.js';
import { describeSource } from '../sources/describe-source.js';
import { type DoctorCheck, fail } from './doctor.js';

/**
 * `doctor`'s check of one source, writing nothing it keeps; each source type checks itself
 * (`SourceDescription.check`): a drop folder exists and a file can be renamed in it (claims are renames),
 * a SQL source connects and each stream's query compiles (`LIMIT 0`), a module source loads.
 */
export async function sourceCheck(source: SourceConfig, loaded: LoadedConfig): Promise<DoctorCheck> {
  const name = `source ${source.id}`;
  try {
    const result = await describeSource(source).check({
      env: loaded.env,
      baseDir: loaded.file ? resolve(loaded.file, '..') : process.cwd(),
    });
    return { name, ...result };
  } catch (error) {
    return fail(name, messageOf(error));
  }
}

import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The package's root folder (the one holding package.json), found from this module's location,
 * so it is the same whether the code runs from `src/` (tests) or from `dist/src/` (the built CLI).
 */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('receivables-sync: cannot find the package root');
    dir = parent;
  }
  return dir;
}

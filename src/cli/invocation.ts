import { userInfo } from 'node:os';
import { isAbsolute, relative } from 'node:path';

/**
 * The command that runs this CLI again, as the user ran it: `receivables-sync` when it came through
 * a link on the PATH (`npm link`, a global install), else `node <the script>` (a clone's
 * `npm run demo` runs `node bin/receivables-sync.js`), its path relative to `cwd` when inside it.
 */
export function invocation(script = process.argv[1] ?? '', cwd = process.cwd()): string {
  if (!script.endsWith('.js')) return 'receivables-sync';
  const inside = relative(cwd, script);
  return `node ${inside && !inside.startsWith('..') && !isAbsolute(inside) ? inside : script}`;
}

/** Who runs this command (the system's user name), for the history of a pause or a dismissal. */
export function commandLineUser(): string {
  try {
    return userInfo().username || 'a user';
  } catch {
    // No passwd entry for this uid (some containers).
    return 'a user';
  }
}

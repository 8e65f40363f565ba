// Preloaded into a CLI process by test/e2e/cli-footprint.test.ts (NODE_OPTIONS=--import): appends
// the name of each package a module is loaded from to the file FOOTPRINT_FILE names.
import { appendFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

registerHooks({
  resolve(specifier, context, next) {
    const resolved = next(specifier, context);
    const at = resolved.url.lastIndexOf('/node_modules/');
    if (at >= 0) {
      const parts = resolved.url.slice(at + '/node_modules/'.length).split('/');
      const name = parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
      appendFileSync(process.env.FOOTPRINT_FILE, `${name}\n`);
    }
    return resolved;
  },
});

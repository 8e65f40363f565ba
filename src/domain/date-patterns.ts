import { createRequire } from 'node:module';

/**
 * date-fns's `parse`, `format` and `isValid`, loaded on first use through its CommonJS build.
 * Through Node 24's ESM loader, `date-fns/parse` costs about 200 ms and 130 MB of peak RSS (the
 * loader reads the package's 200 KB package.json again for each of its modules); through
 * `require`, 30 ms and a few MB. Only a source with a `dateFormat` of its own loads it.
 */
const require = createRequire(import.meta.url);

interface DateFns {
  parse: typeof import('date-fns/parse').parse;
  format: typeof import('date-fns/format').format;
  isValid: typeof import('date-fns/isValid').isValid;
}

let loaded: DateFns | undefined;

export function dateFns(): DateFns {
  loaded ??= {
    parse: (require('date-fns/parse') as typeof import('date-fns/parse')).parse,
    format: (require('date-fns/format') as typeof import('date-fns/format')).format,
    isValid: (require('date-fns/isValid') as typeof import('date-fns/isValid')).isValid,
  };
  return loaded;
}

/** The CSV drop folder source: its factory and the errors it can throw. */
export {
  type CsvPassSummary,
  type CsvSource,
  type CsvSourceConfig,
  type CsvSourceProps,
  createCsvSource,
} from './csv-source.js';
export { CsvSourceError, type CsvSourceErrorCode } from './errors.js';

/** The CSV drop folder source: its factory, its ledger port, and the errors it can throw. */
export {
  type CsvPassSummary,
  type CsvSource,
  type CsvSourceConfig,
  type CsvSourceProps,
  createCsvSource,
} from './csv-source.js';
export { CsvSourceError, type CsvSourceErrorCode } from './errors.js';
export {
  type DropFileEntry,
  type DropFileLedger,
  type DropFileStatus,
  InMemoryDropFileLedger,
  type SeenDropFile,
} from './ledger.js';

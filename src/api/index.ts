/** The Receivables Public API client: one import for the rest of the codebase. */

export type { TokenProvider } from './auth/types.js';
export {
  DEFAULT_CONCURRENCY,
  DEFAULT_TIMEOUT_MS,
  DEFAULT_USER_AGENT,
  ReceivablesClient,
  type ReceivablesClientProps,
} from './client.js';
export type { AccountListParams } from './endpoints/accounts.js';
export type { BalanceListParams } from './endpoints/balances.js';
export type {
  AccountChannelList,
  ChannelList,
  CommunicationListParams,
} from './endpoints/communications.js';
export {
  type CreditNotesEndpoint,
  type DocumentListParams,
  documentFormFields,
  type InvoicesEndpoint,
} from './endpoints/documents.js';
export type { ReadOptions, WriteOptions } from './endpoints/shared.js';
export type { TaskSearchParams } from './endpoints/tasks.js';
export * from './errors.js';
export * from './filters.js';
export { encodeMultipart, type FilePart, type MultipartBody, type MultipartField } from './multipart.js';
export { collect, type FetchPage, type Page, paginate, paginateItems } from './pagination.js';
export type { RateInfo, RateLimiter } from './rate-limit/types.js';
export {
  backoffDelay,
  DEFAULT_RETRY_POLICY,
  isRetryable,
  type RetryPolicy,
} from './retry.js';
export {
  API_PREFIX,
  type ApiResult,
  type HttpMethod,
  type RequestBody,
  type Requester,
  type RequestOptions,
  type RequestStats,
} from './transport.js';
export type * from './types.js';

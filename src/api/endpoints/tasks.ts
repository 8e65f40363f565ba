import type { Page } from '../pagination.js';
import type { AccountTask } from '../types.js';
import {
  type EndpointContext,
  get,
  iterate,
  type ListParams,
  listQuery,
  type ReadOptions,
} from './shared.js';

/** `sortBy` values are not shown by the spec; the sandbox accepts createdAt, updatedAt, title, balance. */
export interface TaskSearchParams extends ListParams<'accountTasks'> {
  organizationId: string;
}

/** `GET /account-tasks/search`: the tasks of a whole organization, filtered, sorted, paginated. */
export class TasksEndpoint {
  readonly #ctx: EndpointContext;

  constructor(ctx: EndpointContext) {
    this.#ctx = ctx;
  }

  searchPage(params: TaskSearchParams, options?: ReadOptions): Promise<Page<AccountTask>> {
    return get(
      this.#ctx,
      '/account-tasks/search',
      listQuery(params, { organizationId: params.organizationId }),
      options,
    );
  }

  search(params: TaskSearchParams): AsyncGenerator<AccountTask, void, undefined> {
    return iterate(this.#ctx, params, (p) => this.searchPage(p));
  }
}

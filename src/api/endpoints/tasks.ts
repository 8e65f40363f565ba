import type { Page } from '../pagination.js';
import { anObject, pageOf } from '../response-shapes.js';
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
    const query = listQuery(params, { organizationId: params.organizationId });
    return get(this.#ctx, { path: '/account-tasks/search', query, expect: pageOf(anObject) }, options);
  }

  search(params: TaskSearchParams): AsyncGenerator<AccountTask, void, undefined> {
    return iterate(this.#ctx, params, (p) => this.searchPage(p));
  }
}

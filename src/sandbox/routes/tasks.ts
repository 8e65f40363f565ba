import type { FastifyInstance } from 'fastify';
import { compareDecimal, formatDecimal, parseDecimal } from '../../domain/decimal.js';
import { requires, type SandboxDeps } from '../context.js';
import { compareStrings } from '../lists/filter-values.js';
import { foldText, type ListDefinition, listPage } from '../lists/index.js';
import type { Account, AccountTask, Tag } from '../model.js';
import { ACCOUNTS_READ } from '../oauth/scopes.js';
import type { SandboxStore } from '../store.js';
import {
  CHOICE_OPERATORS,
  DATE_OPERATORS,
  LIST_OPERATORS,
  listQueryOf,
  NAME_OPERATORS,
  NUMBER_OPERATORS,
  organizationOfQuery,
} from './balance-query.js';

/** A task joined to its account and tags. */
interface TaskRow {
  task: AccountTask;
  account: Account;
  tags: Tag[];
}

const TASK_STATUSES: readonly AccountTask['status'][] = ['Todo', 'InProgress', 'Done'];

const byInstant = (instant: (row: TaskRow) => string) => (a: TaskRow, b: TaskRow) =>
  Date.parse(instant(a)) - Date.parse(instant(b)) || compareStrings(a.task.id, b.task.id);

/**
 * `/account-tasks/search`. Operators per field and the sort keys are sandbox choices; `tags`
 * matches a tag by id or by name.
 */
const TASKS: ListDefinition<TaskRow> = {
  endpoint: '/account-tasks/search',
  historical: false,
  filters: {
    title: { kind: 'text', operators: NAME_OPERATORS, value: (r) => r.task.title },
    accountName: { kind: 'text', operators: NAME_OPERATORS, value: (r) => r.account.fullName },
    status: {
      kind: 'enum',
      operators: CHOICE_OPERATORS,
      enumValues: TASK_STATUSES,
      value: (r) => r.task.status,
    },
    type: { kind: 'text', operators: CHOICE_OPERATORS, value: (r) => r.task.type },
    tags: { kind: 'list', operators: LIST_OPERATORS, value: (r) => r.tags.flatMap((t) => [t.id, t.name]) },
    balance: {
      kind: 'number',
      operators: NUMBER_OPERATORS,
      value: (r) => formatDecimal(parseDecimal(r.task.balance)),
    },
    createdAt: { kind: 'date', operators: DATE_OPERATORS, value: (r) => r.task.createdAt },
    updatedAt: { kind: 'date', operators: DATE_OPERATORS, value: (r) => r.task.updatedAt },
  },
  sorts: {
    createdAt: byInstant((r) => r.task.createdAt),
    updatedAt: byInstant((r) => r.task.updatedAt),
    title: (a, b) => compareStrings(foldText(a.task.title), foldText(b.task.title)),
    balance: (a, b) => compareDecimal(a.task.balance, b.task.balance),
  },
  defaultOrder: byInstant((r) => r.task.createdAt),
};

/** Tasks of the organization's accounts; a task goes with its account when the account is deleted. */
function taskRows(store: SandboxStore, organizationId: string): TaskRow[] {
  const rows: TaskRow[] = [];
  for (const task of store.tasks.values()) {
    const account = store.accounts.get(task.accountId);
    if (task.organizationId !== organizationId || !account) continue;
    const tags = task.tagIds.flatMap((id) => store.tags.get(id) ?? []);
    rows.push({ task, account, tags });
  }
  return rows;
}

const taskJson = ({ task, account, tags }: TaskRow) => ({
  id: task.id,
  organizationId: task.organizationId,
  accountId: task.accountId,
  accountName: account.fullName,
  title: task.title,
  status: task.status,
  type: task.type,
  tags: tags.map((t) => ({ id: t.id, name: t.name })),
  balance: formatDecimal(parseDecimal(task.balance)),
  createdAt: task.createdAt,
  updatedAt: task.updatedAt,
});

/** Account task search; the scope is not shown, the account readers are accepted. */
export function registerTaskRoutes(app: FastifyInstance, deps: SandboxDeps): void {
  app.get('/account-tasks/search', requires(ACCOUNTS_READ), async (request) => {
    const organization = organizationOfQuery(request, deps);
    return listPage(TASKS, taskRows(deps.store, organization.id), listQueryOf(request), taskJson);
  });
}

import type { RecordKind, RecordOrigin, RowProblem } from '../domain/records.js';
import type { FailureInput } from '../domain/sync-state.js';
import { storableCopy } from '../domain/text.js';
import type { FailureReason } from './outcome.js';
import type { PassBookkeeping, PassIdentity, PassPorts } from './pass-scope.js';

/**
 * Records a failed record: in the pass report (and so in the unit's report) and, unless the pass
 * is a dry run, in the state DB with its payload so it can be retried. Text the state DB cannot
 * store (a NUL character) is stored replaced by U+FFFD.
 */
export async function recordFailure(
  scope: PassIdentity & PassPorts & PassBookkeeping,
  kind: RecordKind,
  sourceKey: string,
  origin: RecordOrigin,
  reason: FailureReason,
  payload: Record<string, unknown> | null,
): Promise<void> {
  scope.report.failed(
    kind,
    {
      origin,
      sourceKey,
      reason: reason.apiCode ? `${reason.message} [${reason.apiCode}]` : reason.message,
      ...(reason.column ? { column: reason.column } : {}),
    },
    { downstream: true },
  );
  // Every such line says why (reason, the API's status and code) and where the row came from.
  scope.logger.warn(
    {
      kind,
      sourceKey,
      ...(origin.file ? { file: origin.file } : {}),
      ...(origin.line ? { line: origin.line } : {}),
      ...(reason.column ? { column: reason.column } : {}),
      stage: reason.stage,
      status: reason.status,
      apiCode: reason.apiCode,
      reason: reason.message,
    },
    'record failed',
  );
  if (scope.dryRun) return;
  scope.failureKinds.add(kind);
  scope.touched.add(kind, sourceKey, 'failed');
  await scope.state.failures.record(
    storableCopy(failureInput(scope, kind, sourceKey, origin, reason, payload)),
  );
}

/**
 * Records the rows a source refused (validation): counted, kept for the pass summary, and written
 * to the state DB in one statement per batch. They are not handed back to the source (it has them).
 */
export async function recordRejected(
  scope: PassIdentity & PassPorts & PassBookkeeping,
  problems: readonly RowProblem[],
): Promise<void> {
  if (problems.length === 0) return;
  const inputs: FailureInput[] = [];
  for (const problem of problems) {
    const origin: RecordOrigin = {
      ...(problem.file ? { file: problem.file } : {}),
      ...(problem.line ? { line: problem.line } : {}),
    };
    const reason: FailureReason = {
      stage: 'validate',
      message: problem.reason,
      status: null,
      apiCode: null,
      retryable: false,
      ...(problem.column ? { column: problem.column } : {}),
    };
    scope.report.failed(
      problem.kind,
      {
        origin,
        sourceKey: problem.sourceKey,
        reason: problem.reason,
        ...(problem.column ? { column: problem.column } : {}),
      },
      { downstream: false },
    );
    if (scope.dryRun) continue;
    // Not listed among the run's records: they never reached the API (the run's failures have
    // them), and a file of a million bad rows would cost a million more rows.
    scope.failureKinds.add(problem.kind);
    const payload = problem.raw ? { raw: problem.raw } : null;
    inputs.push(storableCopy(failureInput(scope, problem.kind, problem.sourceKey, origin, reason, payload)));
  }
  const first = problems[0]!;
  scope.logger.warn(
    { rows: problems.length, kind: first.kind, ...(first.file ? { file: first.file } : {}) },
    'rows refused by validation',
  );
  if (inputs.length > 0) await scope.state.failures.recordMany(inputs);
}

function failureInput(
  scope: PassIdentity,
  kind: RecordKind,
  sourceKey: string,
  origin: RecordOrigin,
  reason: FailureReason,
  payload: Record<string, unknown> | null,
): FailureInput {
  return {
    sourceId: scope.sourceId,
    kind,
    sourceKey,
    stage: reason.stage,
    message: reason.message,
    status: reason.status,
    apiCode: reason.apiCode,
    file: origin.file ?? null,
    line: origin.line ?? null,
    column: reason.column ?? null,
    retryable: reason.retryable,
    payload,
    runId: scope.runId,
  };
}

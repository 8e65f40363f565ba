/**
 * What each count of a reconciliation's repair means, in words, keyed as the repair counts them
 * (`reconcile/repair.ts`; the `--json` line and the `reconciliations` table keep the keys). The CLI's
 * `reconcile --repair` and the dashboard's reconciliation card both say them so.
 */
export const REPAIR_WORDS: Readonly<Record<string, string>> = {
  recreatedOrAdopted: 're-created or adopted again on the service',
  updated: 'set back on the service to what the source says',
  unlinked: 'orphan account(s) unlinked from this connection',
  recordedAsFailure: 'held by the service, recorded as failures',
  failed: 'could not be repaired',
};

/** A repair count in words: `3 re-created or adopted again on the service`. */
export const repairInWords = (action: string, count: number): string =>
  `${count} ${REPAIR_WORDS[action] ?? 'other'}`;

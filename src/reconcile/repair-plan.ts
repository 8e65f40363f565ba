import { kindNoun, type RecordKind } from '../domain/records.js';
import type { DriftItem } from './types.js';

/** What `reconcile --repair` does about each drifted record (docs/reconcile.md, "Repair"). */
export interface RepairPlan {
  /**
   * Records sent again through the sync engine from their stored version, looked up on the service
   * by their source id first: re-created when missing, adopted when found (the record map then
   * points at the found id), updated / patched where they differ.
   */
  replay: DriftItem[];
  /** Orphan accounts whose `Custom` source is unlinked (`reconcile.deleteOrphans`). */
  unlink: DriftItem[];
  /** Held records, recorded as failures with the reason no write can fix them. */
  fail: Array<{ item: DriftItem; reason: string }>;
}

export interface PlanRepairsProps {
  items: readonly DriftItem[];
  /** `reconcile.deleteOrphans` of the source. */
  deleteOrphans: boolean;
  /** `kind:key` of the records a replay can send: stored in the record map or in an open failure. */
  replayable: ReadonlySet<string>;
}

export const keyOf = (kind: RecordKind, sourceKey: string) => `${kind}:${sourceKey}`;

/** Decides the repair of every drifted record that is not already recorded as held. */
export function planRepairs(props: PlanRepairsProps): RepairPlan {
  const plan: RepairPlan = { replay: [], unlink: [], fail: [] };
  for (const item of props.items) {
    if (item.acknowledged) continue;
    const replayable = props.replayable.has(keyOf(item.kind, item.sourceKey));
    switch (item.category) {
      case 'missing':
      case 'unresolved':
        if (replayable) plan.replay.push(item);
        else
          plan.fail.push({
            item,
            reason: `${describe(item)}: its last synced version is not stored; sync the source again (dashboard: full re-sync)`,
          });
        break;
      case 'changed': {
        const frozen = (item.fields ?? []).filter((f) => f.frozen);
        if (frozen.length < (item.fields ?? []).length && replayable) plan.replay.push(item);
        if (frozen.length > 0)
          plan.fail.push({
            item,
            reason: `${describe(item)}: ${frozen.map((f) => f.field).join(', ')} changed on the service; frozen at creation, the API cannot set ${frozen.length === 1 ? 'it' : 'them'} back`,
          });
        break;
      }
      case 'readOnly':
        plan.fail.push({
          item,
          reason: `${describe(item)}: ${item.reason ?? 'read-only'}; no write can change it`,
        });
        break;
      case 'orphan':
        if (replayable) plan.replay.push(item);
        else if (item.kind === 'account' && props.deleteOrphans) plan.unlink.push(item);
        else
          plan.fail.push({
            item,
            reason:
              item.kind === 'account'
                ? `${describe(item)}: no row of this source claims it; set reconcile.deleteOrphans to unlink it, or delete it on the service`
                : `${describe(item)}: no row of this source claims it, and the Public API cannot delete documents; delete it on the service`,
          });
        break;
    }
  }
  return plan;
}

/** `invoice INV-7 (api 1234…)`: how a report names a drifted record. */
export function describe(item: DriftItem): string {
  const id = item.foundId ?? item.apiId;
  return `${item.category} ${kindNoun(item.kind)} ${item.sourceKey}${id ? ` (${id})` : ''}`;
}

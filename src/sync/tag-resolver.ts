import { contentHash } from '../mapping/content-hash.js';
import type { PassIdentity, PassPorts } from './pass-scope.js';
import { withPendingWrite } from './pending-write.js';
import type { RemoteTag } from './ports.js';

/**
 * Tag names -> tag ids for one pass: the organization's tags are listed once, missing ones are
 * created once (names compare ignoring case, as the API refuses a duplicate name that way).
 */
export class TagResolver {
  #byName: Promise<Map<string, RemoteTag>> | undefined;
  readonly #creating = new Map<string, Promise<RemoteTag>>();
  readonly #settling = new Map<string, Promise<void>>();

  constructor(private readonly ctx: PassIdentity & PassPorts) {}

  async idsFor(names: readonly string[]): Promise<string[]> {
    if (names.length === 0) return [];
    this.#byName ??= this.ctx.api
      .listTags()
      .then((tags) => new Map(tags.map((t) => [t.name.toLowerCase(), t])));
    const known = await this.#byName;
    const ids: string[] = [];
    for (const name of names) {
      const key = name.toLowerCase();
      const listed = known.get(key);
      if (listed) await this.#settled(key);
      ids.push((listed ?? (await this.#create(name, known))).id);
    }
    return ids;
  }

  /**
   * A tag the organization has: a create of it left pending by a killed pass (sent, answered, then
   * the process died) will not be sent again. Once per name and pass.
   */
  #settled(key: string): Promise<void> {
    let settled = this.#settling.get(key);
    if (!settled) {
      settled = this.ctx.dryRun
        ? Promise.resolve()
        : this.ctx.state.pending.forget({
            sourceId: this.ctx.sourceId,
            kind: 'account',
            sourceKey: `tag:${key}`,
            operation: 'createTag',
          });
      this.#settling.set(key, settled);
    }
    return settled;
  }

  #create(name: string, known: Map<string, RemoteTag>): Promise<RemoteTag> {
    const key = name.toLowerCase();
    let pending = this.#creating.get(key);
    if (!pending) {
      pending = withPendingWrite(
        this.ctx,
        { kind: 'account', sourceKey: `tag:${key}`, operation: 'createTag' },
        contentHash(name),
        (k) => this.ctx.api.createTag(name, { idempotencyKey: k }),
      ).then((tag) => {
        known.set(key, tag);
        return tag;
      });
      this.#creating.set(key, pending);
    }
    return pending;
  }
}

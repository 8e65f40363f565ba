import { contentHash } from '../mapping/content-hash.js';
import type { RemoteTag } from './api-port.js';
import { type SyncContext, withPendingWrite } from './context.js';

/**
 * Tag names -> tag ids for one pass: the organization's tags are listed once, missing ones are
 * created once (names compare ignoring case, as the API refuses a duplicate name that way).
 */
export class TagResolver {
  #byName: Promise<Map<string, RemoteTag>> | undefined;
  readonly #creating = new Map<string, Promise<RemoteTag>>();

  constructor(private readonly ctx: SyncContext) {}

  async idsFor(names: readonly string[]): Promise<string[]> {
    if (names.length === 0) return [];
    this.#byName ??= this.ctx.api
      .listTags()
      .then((tags) => new Map(tags.map((t) => [t.name.toLowerCase(), t])));
    const known = await this.#byName;
    const ids: string[] = [];
    for (const name of names) {
      const key = name.toLowerCase();
      const tag = known.get(key) ?? (await this.#create(name, known));
      ids.push(tag.id);
    }
    return ids;
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

/**
 * The line each sourceId was first seen on in a file, to refuse a second row with the same id.
 *
 * A `Map<string, number>` of a million ids costs over 100 MB of V8 heap and slows every garbage
 * collection; this exact hash set keeps the ids' UTF-8 bytes back to back in one growing buffer,
 * and a slot table, each id's hash, start and line in typed arrays: 12 bytes per id, 12 to 24 of
 * slots, plus the id itself, outside the garbage-collected heap.
 *
 * A lookup hashes the string's characters as they are and compares bytes only when a stored hash
 * is the same (in practice, only for the id itself): a file of new ids costs one pass over each
 * id's characters and one copy of its bytes, and allocates nothing.
 *
 * What a new id costs is mostly one read of its slot far from the last one (a cache and TLB miss:
 * the table of a million ids is megabytes). The slots it probes are read from a table of 16-bit tags
 * (drawn from each slot's hash), a third the size of one of entry numbers, and the entry number is
 * only read when a tag matches; it is written beside, a store the CPU does not wait for. A million
 * sequential ids, the index alone, 12 rounds: a median of 0.16–0.20 µs an id, against 0.23 when
 * each probe read an entry number and then that entry's hash.
 */
export class FirstSeenIndex {
  /** Open addressing, kept at most half full: per slot, its entry's tag (`tagOf` its hash), 0 when free. */
  #tags: Uint16Array;
  /** Per slot: the entry number it holds (read only when its tag matches). */
  #slots: Int32Array;
  /** Per entry: its hash, where its bytes start in the arena (they end where the next's start), its line. */
  #hashes: Uint32Array;
  #starts: Uint32Array;
  #lines: Uint32Array;
  #arena: Buffer;
  #arenaUsed = 0;
  #count = 0;
  #scratch = Buffer.allocUnsafe(256);

  /**
   * @param expectedKeys about how many keys will be recorded (a file's lines, say): the tables are
   *   made that large at once (up to 4M keys), rather than grown by copies whose old halves stay in
   *   memory until a full garbage collection. More keys than that still fit; fewer cost little,
   *   as pages of the tables never written are never resident.
   */
  constructor(expectedKeys = 0) {
    const entries = Math.min(MAX_PRESIZED, Math.max(MIN_ENTRIES, Math.ceil(expectedKeys)));
    let slots = MIN_ENTRIES * 2;
    while (slots < entries * 2) slots *= 2;
    this.#tags = new Uint16Array(slots);
    this.#slots = new Int32Array(slots);
    this.#hashes = new Uint32Array(entries);
    this.#starts = new Uint32Array(entries);
    this.#lines = new Uint32Array(entries);
    this.#arena = Buffer.allocUnsafe(entries * ARENA_BYTES_PER_KEY);
  }

  get size(): number {
    return this.#count;
  }

  /**
   * Records `key` as first seen on `line` and returns undefined or, when the key was already
   * recorded, returns the line it was first seen on (and records nothing).
   */
  firstSeen(key: string, line: number): number | undefined {
    const hash = hashString(key);
    const found = this.#find(key, hash);
    if (found > 0) return this.#lines[found - 1];
    this.#add(key, hash, line, -found - 1);
    return undefined;
  }

  /** Whether `key` was recorded (read only: records nothing). */
  has(key: string): boolean {
    return this.#find(key, hashString(key)) > 0;
  }

  /** The entry number + 1 holding `key`, or minus (the free slot where it would go + 1). */
  #find(key: string, hash: number): number {
    const tags = this.#tags;
    const mask = tags.length - 1;
    const tag = tagOf(hash);
    let length = -1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const held = tags[slot]!;
      if (held === 0) return -(slot + 1);
      if (held !== tag) continue;
      const entry = this.#slots[slot]!;
      if (this.#hashes[entry] !== hash) continue;
      if (length < 0) length = this.#encode(key);
      if (this.#equals(entry, length)) return entry + 1;
    }
  }

  #encode(key: string): number {
    if (key.length * 3 > this.#scratch.length) {
      this.#scratch = Buffer.allocUnsafe(Math.max(key.length * 3, this.#scratch.length * 2));
    }
    return this.#scratch.write(key, 0, 'utf8');
  }

  #end(entry: number): number {
    return entry + 1 < this.#count ? this.#starts[entry + 1]! : this.#arenaUsed;
  }

  #equals(entry: number, length: number): boolean {
    const start = this.#starts[entry]!;
    if (this.#end(entry) - start !== length) return false;
    return this.#arena.compare(this.#scratch, 0, length, start, start + length) === 0;
  }

  #add(key: string, hash: number, line: number, slot: number): void {
    const entry = this.#count++;
    if (entry === this.#starts.length) {
      this.#hashes = grown(this.#hashes);
      this.#starts = grown(this.#starts);
      this.#lines = grown(this.#lines);
    }
    const start = this.#arenaUsed;
    const needed = start + key.length * 3;
    if (needed > this.#arena.length) {
      const arena = Buffer.allocUnsafe(Math.max(this.#arena.length * 2, needed));
      this.#arena.copy(arena, 0, 0, start);
      this.#arena = arena;
    }
    this.#arenaUsed = start + writeUtf8(this.#arena, start, key);
    this.#hashes[entry] = hash;
    this.#starts[entry] = start;
    this.#lines[entry] = line;
    this.#tags[slot] = tagOf(hash);
    this.#slots[slot] = entry;
    if (this.#count * 2 > this.#tags.length) this.#rehash();
  }

  #rehash(): void {
    const tags = new Uint16Array(this.#tags.length * 2);
    const slots = new Int32Array(tags.length);
    const mask = tags.length - 1;
    for (let entry = 0; entry < this.#count; entry++) {
      const hash = this.#hashes[entry]!;
      let slot = hash & mask;
      while (tags[slot] !== 0) slot = (slot + 1) & mask;
      tags[slot] = tagOf(hash);
      slots[slot] = entry;
    }
    this.#tags = tags;
    this.#slots = slots;
  }
}

/**
 * A slot's tag: 16 bits of the hash multiplied by an odd constant (Fibonacci hashing), so every bit
 * of the hash weighs on it, those that picked the slot too (in a table of 2M slots, the hash's high
 * 16 bits would overlap the slot's 21); never 0 (a free slot).
 */
export const tagOf = (hash: number): number => Math.imul(hash, 0x9e3779b1) >>> 16 || 1;

const MIN_ENTRIES = 1 << 9;
const MAX_PRESIZED = 1 << 22;
/** Room made per expected key in the arena: ids are mostly shorter (`INV-00000001` is 12). */
const ARENA_BYTES_PER_KEY = 16;

function grown(from: Uint32Array) {
  const to = new Uint32Array(from.length * 2);
  to.set(from);
  return to;
}

/** Writes `key` as UTF-8 at `at` (room for 3 bytes a character is there); the bytes written. */
function writeUtf8(to: Buffer, at: number, key: string): number {
  // Ids are nearly always ASCII: copied by hand, that is cheaper than a call into the runtime.
  for (let i = 0; i < key.length; i++) {
    const code = key.charCodeAt(i);
    if (code >= 0x80) return i + to.write(key.slice(i), at + i, 'utf8');
    to[at + i] = code;
  }
  return key.length;
}

/**
 * 32-bit FNV-1a over the UTF-16 code units, then murmur3's finaliser so the low bits (the slot)
 * mix well. Equal strings have equal code units, so equal hashes.
 */
export function hashString(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  hash = Math.imul(hash ^ (hash >>> 16), 0x85ebca6b);
  hash = Math.imul(hash ^ (hash >>> 13), 0xc2b2ae35);
  return (hash ^ (hash >>> 16)) >>> 0;
}

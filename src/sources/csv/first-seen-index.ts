/**
 * The line each sourceId was first seen on in a file, to refuse a second row with the same id.
 *
 * A `Map<string, number>` of a million ids costs over 100 MB of V8 heap and slows every garbage
 * collection; this exact hash set keeps the ids' UTF-8 bytes, length-prefixed, in one growing
 * buffer, and a slot table and the lines in typed arrays: about 20 bytes per id plus the id itself,
 * outside the garbage-collected heap.
 */
export class FirstSeenIndex {
  /** Open addressing: entry number + 1, 0 when free. Kept at most half full. */
  #slots = new Int32Array(1 << 10);
  /** Per entry: where its bytes start in the arena, and the line it was first seen on. */
  #offsets = new Uint32Array(1 << 9);
  #lines = new Uint32Array(1 << 9);
  #arena = Buffer.allocUnsafe(1 << 14);
  #arenaUsed = 0;
  #count = 0;
  #scratch = Buffer.allocUnsafe(256);

  get size(): number {
    return this.#count;
  }

  /**
   * Records `key` as first seen on `line` and returns undefined or, when the key was already
   * recorded, returns the line it was first seen on (and records nothing).
   */
  firstSeen(key: string, line: number): number | undefined {
    const length = this.#encode(key);
    const mask = this.#slots.length - 1;
    let slot = hashBytes(this.#scratch, 0, length) & mask;
    for (;;) {
      const held = this.#slots[slot]!;
      if (held === 0) break;
      if (this.#equals(held - 1, length)) return this.#lines[held - 1];
      slot = (slot + 1) & mask;
    }
    this.#add(length, line, slot);
    return undefined;
  }

  #encode(key: string): number {
    if (key.length * 3 > this.#scratch.length) {
      this.#scratch = Buffer.allocUnsafe(Math.max(key.length * 3, this.#scratch.length * 2));
    }
    return this.#scratch.write(key, 0, 'utf8');
  }

  /** Entry bytes: a 4-byte little-endian length (kept simple: ids are short), then the UTF-8. */
  #equals(entry: number, length: number): boolean {
    const offset = this.#offsets[entry]!;
    if (this.#arena.readUInt32LE(offset) !== length) return false;
    return this.#arena.compare(this.#scratch, 0, length, offset + 4, offset + 4 + length) === 0;
  }

  #add(length: number, line: number, slot: number): void {
    const entry = this.#count++;
    if (entry === this.#offsets.length) {
      this.#offsets = grown(this.#offsets);
      this.#lines = grown(this.#lines);
    }
    const needed = this.#arenaUsed + 4 + length;
    if (needed > this.#arena.length) {
      const arena = Buffer.allocUnsafe(Math.max(this.#arena.length * 2, needed));
      this.#arena.copy(arena, 0, 0, this.#arenaUsed);
      this.#arena = arena;
    }
    this.#offsets[entry] = this.#arenaUsed;
    this.#lines[entry] = line;
    this.#arena.writeUInt32LE(length, this.#arenaUsed);
    this.#scratch.copy(this.#arena, this.#arenaUsed + 4, 0, length);
    this.#arenaUsed = needed;
    this.#slots[slot] = entry + 1;
    if (this.#count * 2 > this.#slots.length) this.#rehash();
  }

  #rehash(): void {
    const slots = new Int32Array(this.#slots.length * 2);
    const mask = slots.length - 1;
    for (let entry = 0; entry < this.#count; entry++) {
      const offset = this.#offsets[entry]!;
      let slot = hashBytes(this.#arena, offset + 4, this.#arena.readUInt32LE(offset)) & mask;
      while (slots[slot] !== 0) slot = (slot + 1) & mask;
      slots[slot] = entry + 1;
    }
    this.#slots = slots;
  }
}

function grown(from: Uint32Array) {
  const to = new Uint32Array(from.length * 2);
  to.set(from);
  return to;
}

/** 32-bit FNV-1a, then murmur3's finaliser so the low bits (the slot) mix well. */
function hashBytes(bytes: Uint8Array, start: number, length: number): number {
  let hash = 0x811c9dc5;
  for (let i = start; i < start + length; i++) hash = Math.imul(hash ^ bytes[i]!, 0x01000193);
  hash = Math.imul(hash ^ (hash >>> 16), 0x85ebca6b);
  hash = Math.imul(hash ^ (hash >>> 13), 0xc2b2ae35);
  return (hash ^ (hash >>> 16)) >>> 0;
}

import { open } from 'node:fs/promises';

export interface FileChunksOptions {
  /** Bytes per read. */
  chunkSize: number;
  /**
   * Buffers read into in turn (default 1): a chunk stays valid until this many more chunks were
   * asked for. A reader that keeps a view of the previous chunk while taking the next (as csv-parse
   * keeps an unfinished record's bytes) needs 2.
   */
  buffers?: number;
  /** The byte to start at (default 0). */
  start?: number;
}

/**
 * A file's bytes in order, read into a few reused buffers, the next read under way while the
 * caller works on a chunk (as a file stream reads ahead). A file stream allocates a buffer per
 * read, which only the garbage collector frees: a large file read at disk speed piles up tens of
 * megabytes of them (off the V8 heap, so they hardly hasten a collection). Stop iterating at any
 * time: the file is closed.
 */
export async function* readFileChunks(path: string, options: FileChunksOptions): AsyncGenerator<Buffer> {
  const { chunkSize } = options;
  // One more than the chunks kept valid: the one the read under way fills.
  const ring = Array.from({ length: Math.max(1, options.buffers ?? 1) + 1 }, () =>
    Buffer.allocUnsafe(chunkSize),
  );
  const handle = await open(path, 'r');
  // From the start, reads follow the file's own position; from elsewhere, each names its offset.
  let position = options.start ?? null;
  const readInto = (buffer: Buffer) => handle.read(buffer, 0, chunkSize, position);
  let reading: ReturnType<typeof readInto> | null = readInto(ring[0]!);
  try {
    for (let turn = 0; ; turn = (turn + 1) % ring.length) {
      const { bytesRead } = await reading;
      reading = null;
      if (bytesRead === 0) return;
      if (position !== null) position += bytesRead;
      const buffer = ring[turn]!;
      reading = readInto(ring[(turn + 1) % ring.length]!);
      yield buffer.subarray(0, bytesRead);
    }
  } finally {
    // A read still under way writes into a buffer of ours: let it end before closing.
    await reading?.catch(() => undefined);
    await handle.close();
  }
}

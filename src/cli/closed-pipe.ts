/** The errors of a write to an output whose reader is gone. */
const CLOSED = new Set(['EPIPE', 'ERR_STREAM_DESTROYED']);

/**
 * A reader that stops early (`failures | head -1`, a pager quit) closes its end of the pipe: the
 * next write to stdout fails with EPIPE, which Node emits as an 'error' event that, unhandled,
 * ends the process with a stack trace. The reader has what it wanted, so the command goes on to
 * its end, its output discarded: it closes what it opened and exits with its own code (the
 * contract's codes describe the command's outcome, which a reader that left does not change).
 * Any other error of these streams is thrown: it is no reader leaving.
 */
export function endQuietlyOnClosedPipes(
  streams: readonly NodeJS.WriteStream[] = [process.stdout, process.stderr],
): void {
  for (const stream of streams) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== undefined && CLOSED.has(error.code)) return;
      throw error;
    });
  }
}

/**
 * Unix pipe manners. When the reader of stdout or stderr goes away (`imgtool ... | head -1`),
 * writes fail with EPIPE. That is the reader saying "enough", not a crash: the CLI stops
 * starting new inputs and finishes or discards the one in flight exactly as on Ctrl-C.
 * Node ignores SIGPIPE, so the failure arrives as an 'error' event on the stream; without a
 * listener it becomes an uncaught exception, which killed the process while ONNX threads were
 * running (exit 134, `Napi::Error`).
 */

const CLOSED_CODES = new Set(['EPIPE', 'ERR_STREAM_DESTROYED', 'ECONNRESET']);

export function isClosedPipeError(err: unknown): boolean {
  return typeof err === 'object' && err !== null && CLOSED_CODES.has((err as { code?: string }).code ?? '');
}

/**
 * Calls `onClosed` once, the first time any of `streams` reports that its reader is gone.
 * Later writes to a closed stream are dropped quietly. Other stream errors stay fatal.
 */
export function onClosedPipe(streams: NodeJS.WritableStream[], onClosed: (stream: NodeJS.WritableStream) => void): void {
  let fired = false;
  for (const stream of streams) {
    stream.on('error', (err: unknown) => {
      if (!isClosedPipeError(err)) throw err;
      if (fired) return;
      fired = true;
      onClosed(stream);
    });
  }
}

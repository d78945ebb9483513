import { createWriteStream } from 'node:fs';
import { stat, unlink } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ImgtoolError } from '../errors.js';
import type { InputSpec, Limits, LoadedInput } from '../ops/define.js';
import { fetchUrl } from '../media/fetch.js';
import { mb } from '../media/image.js';
import type { InputRef } from './inputs.js';

/** A URL input may be a large video on a slow link; stalls are caught sooner by the idle timeouts. */
const URL_DEADLINE_MS = 10 * 60_000;

/** Reads a stream into memory, refusing more than `limit` bytes without buffering them. */
async function readLimited(stream: AsyncIterable<Uint8Array | string>, limit: number, name: string, op: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of stream) {
    total += chunk.length;
    if (total > limit) throw new ImgtoolError('file_size_too_large', `${name} is larger than ${mb(limit)}, the limit for ${op}`);
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}

/**
 * Loads one input for a local pipeline: files are stat'ed (images are read by the decoder),
 * URLs are downloaded (videos to a temp file, since ffmpeg wants a path), stdin is read.
 */
export async function loadInput(
  ref: InputRef,
  spec: InputSpec,
  limits: Limits,
  op: string,
  opts: { signal: AbortSignal; tempPath: (ext: string) => string; stdin?: NodeJS.ReadableStream },
): Promise<{ input: LoadedInput; cleanup: () => Promise<void> }> {
  const none = async () => {};
  if (ref.kind === 'file') {
    const st = await stat(ref.path).catch(() => undefined);
    if (!st?.isFile()) throw new ImgtoolError('input_not_found', `${ref.display}: no such file`);
    return { input: { name: ref.display, path: ref.path, size: st.size }, cleanup: none };
  }
  if (ref.kind === 'stdin') {
    const data = await readLimited(opts.stdin ?? process.stdin, limits.maxBytes, 'stdin', op);
    if (spec.kind === 'video') {
      const path = opts.tempPath('input');
      await pipeline(Readable.from([data]), createWriteStream(path));
      return { input: { name: 'stdin', path, size: data.length }, cleanup: () => unlink(path).catch(() => {}) };
    }
    return { input: { name: 'stdin', data, size: data.length }, cleanup: none };
  }
  // The user's own URLs: their local network is allowed (unlike on the server).
  const toFile = spec.kind === 'video' ? opts.tempPath('input') : undefined;
  const got = await fetchUrl(ref.url, {
    maxBytes: limits.maxBytes,
    urlCode: spec.kind === 'video' ? 'invalid_video_url' : 'invalid_image_url',
    field: ref.url,
    operation: op,
    allowPrivate: true,
    timeoutMs: URL_DEADLINE_MS,
    signal: opts.signal,
    toFile,
  });
  if (got.file) return { input: { name: ref.url, path: got.file, size: got.size }, cleanup: () => unlink(got.file!).catch(() => {}) };
  return { input: { name: ref.url, data: got.data, size: got.size }, cleanup: none };
}

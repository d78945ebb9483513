import { createWriteStream } from 'node:fs';
import { stat, unlink } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ImgtoolError } from '../errors.js';
import type { InputSpec, Limits, LoadedInput } from '../ops/define.js';
import { mb } from '../media/image.js';
import type { InputRef } from './inputs.js';

/** Reads a stream into memory, refusing more than `limit` bytes without buffering them. */
async function readLimited(stream: AsyncIterable<Uint8Array>, limit: number, name: string, op: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of stream) {
    total += chunk.length;
    if (total > limit) throw new ImgtoolError('file_size_too_large', `${name} is larger than ${mb(limit)}, the limit for ${op}`);
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}

async function fetchUrl(url: string, signal: AbortSignal): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(url, { signal, redirect: 'follow' });
  } catch (err) {
    if (signal.aborted) throw new ImgtoolError('job_cancelled', 'cancelled');
    throw new ImgtoolError('fetch_failed', `${url} could not be downloaded (${(err as Error).message}); check the URL and your connection`, { cause: err });
  }
  if (!res.ok || !res.body) {
    throw new ImgtoolError('fetch_failed', `${url} could not be downloaded: HTTP ${res.status}`);
  }
  return res;
}

/**
 * Loads one input for a local pipeline: files are stat'ed (images are read by the decoder),
 * URLs are downloaded (videos to a temp file, since ffmpeg wants a path), stdin is read.
 */
export async function loadInput(ref: InputRef, spec: InputSpec, limits: Limits, op: string, opts: { signal: AbortSignal; tempPath: (ext: string) => string; stdin?: NodeJS.ReadableStream }): Promise<{ input: LoadedInput; cleanup: () => Promise<void> }> {
  const none = async () => {};
  if (ref.kind === 'file') {
    const st = await stat(ref.path).catch(() => undefined);
    if (!st?.isFile()) throw new ImgtoolError('input_not_found', `${ref.display}: no such file`);
    return { input: { name: ref.display, path: ref.path, size: st.size }, cleanup: none };
  }
  if (ref.kind === 'stdin') {
    const stream = (opts.stdin ?? process.stdin) as unknown as AsyncIterable<Uint8Array>;
    const data = await readLimited(stream, limits.maxBytes, 'stdin', op);
    if (spec.kind === 'video') {
      const path = opts.tempPath('input');
      await pipeline(Readable.from([data]), createWriteStream(path));
      return { input: { name: 'stdin', path, size: data.length }, cleanup: () => unlink(path).catch(() => {}) };
    }
    return { input: { name: 'stdin', data, size: data.length }, cleanup: none };
  }
  const res = await fetchUrl(ref.url, opts.signal);
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (declared > limits.maxBytes) {
    await res.body?.cancel().catch(() => {});
    throw new ImgtoolError('file_size_too_large', `${ref.url} is ${mb(declared)}; ${op} accepts at most ${mb(limits.maxBytes)}`);
  }
  const body = res.body as unknown as AsyncIterable<Uint8Array>;
  const data = await readLimited(body, limits.maxBytes, ref.url, op);
  if (spec.kind === 'video') {
    const path = opts.tempPath('input');
    await pipeline(Readable.from([data]), createWriteStream(path));
    return { input: { name: ref.url, path, size: data.length }, cleanup: () => unlink(path).catch(() => {}) };
  }
  return { input: { name: ref.url, data, size: data.length }, cleanup: none };
}

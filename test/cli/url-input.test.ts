import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadInput } from '../../src/cli/load-input.js';
import { imageInput } from '../../src/ops/common.js';
import type { InputSpec } from '../../src/ops/define.js';
import { fixture, tempDir } from '../helpers.js';

/**
 * The CLI downloads URL inputs with the server's streaming downloader: size limits hold even
 * when the server sends no Content-Length, videos stream to a temporary file, and a refused
 * download leaves nothing behind.
 */

const jpeg = readFileSync(fixture('images/baboon.jpg'));
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/a.jpg') res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': jpeg.length }).end(jpeg);
    else if (req.url === '/chunked.jpg') {
      // No Content-Length: the limit must be enforced while streaming.
      res.writeHead(200, { 'content-type': 'image/jpeg' });
      for (let i = 0; i < 8; i++) res.write(jpeg);
      res.end();
    } else if (req.url === '/redirect') res.writeHead(302, { location: '/a.jpg' }).end();
    else res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => server?.close());

const video: InputSpec = { key: 'video', kind: 'video', urlField: 'video_url', fileField: 'video', inlineBase64: false, description: 'video' };
const limits = (maxBytes: number) => ({ maxBytes, minSide: 1, maxSide: 10_000, formats: [] });
const opts = (dir: string) => ({ signal: new AbortController().signal, tempPath: (ext: string) => join(dir, `t.${ext}`) });

describe('CLI URL inputs', () => {
  test('an image URL (after a redirect) is read into memory, named after the URL', async () => {
    const { input } = await loadInput({ kind: 'url', url: `${base}/redirect` }, imageInput(), limits(10_000_000), 'upscale', opts(tempDir()));
    expect(input).toMatchObject({ name: `${base}/redirect`, size: jpeg.length });
    expect(input.data!.equals(jpeg)).toBe(true);
  });

  test('a video URL streams to a temporary file that cleanup removes', async () => {
    const dir = tempDir();
    const { input, cleanup } = await loadInput({ kind: 'url', url: `${base}/a.jpg` }, video, limits(10_000_000), 'video-remove-background', opts(dir));
    expect(input.path).toBe(join(dir, 't.input'));
    expect(readFileSync(input.path!).equals(jpeg)).toBe(true);
    await cleanup();
    expect(existsSync(input.path!)).toBe(false);
  });

  test('over the limit without Content-Length: file_size_too_large naming the operation, no file left', async () => {
    const dir = tempDir();
    const err = await loadInput({ kind: 'url', url: `${base}/chunked.jpg` }, video, limits(jpeg.length * 2), 'video-remove-background', opts(dir)).catch(
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'file_size_too_large' });
    expect((err as Error).message).toMatch(/the limit for video-remove-background/);
    expect(existsSync(join(dir, 't.input'))).toBe(false);
  });

  test('HTTP errors are fetch_failed naming the host and status', async () => {
    const err = await loadInput({ kind: 'url', url: `${base}/missing.jpg` }, imageInput(), limits(1e7), 'upscale', opts(tempDir())).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'fetch_failed' });
    expect((err as Error).message).toMatch(/answered HTTP 404/);
  });
});

import { execFileSync } from 'node:child_process';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomUUID } from 'node:crypto';
import { getOperation } from '../src/ops/registry.js';
import { parseOptions } from '../src/ops/validate.js';
import type { LoadedInput, OpResult, ProgressEvent, RunContext } from '../src/ops/define.js';
import { ffmpegPath } from '../src/media/ffmpeg.js';

/** Test media inside the repository (see test/fixtures/README.md for sources and licences). */
export const FIXTURES = resolve(__dirname, 'fixtures');
export const fixture = (rel: string) => join(FIXTURES, rel);

export function tempDir(prefix = 'imgtool-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * Writes a short H.264 MP4 (no audio) cut from the fixture clip tree.avi, for tests that need a
 * video in a container the spec accepts (the fixture itself is Cinepak in AVI).
 */
export function treeClip(path: string, o: { seconds: number; size?: string; fps?: number }): string {
  const scale = o.size ? ['-vf', `scale=${o.size.replace('x', ':')}`] : [];
  const rate = o.fps ? ['-r', String(o.fps)] : [];
  execFileSync(ffmpegPath(), [
    ...['-v', 'error', '-y', '-i', fixture('video/tree.avi'), '-t', String(o.seconds)],
    ...scale,
    ...rate,
    ...['-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-an', path],
  ]);
  return path;
}

export function fileInput(path: string): LoadedInput {
  return { name: path, path, size: statSync(path).size };
}

export function bufferInput(name: string, data: Buffer): LoadedInput {
  return { name, data, size: data.length };
}

export interface RunOutcome {
  result: OpResult;
  progress: ProgressEvent[];
  warnings: string[];
}

/**
 * Runs an operation's local pipeline the way the CLI does: options validated by the
 * operation's own schema, a context that records progress and warnings.
 */
export async function runOp(
  name: string,
  inputs: Record<string, LoadedInput | string>,
  rawOptions: Record<string, unknown> = {},
  signal: AbortSignal = new AbortController().signal,
): Promise<RunOutcome> {
  const op = getOperation(name);
  if (!op) throw new Error(`no operation ${name}`);
  const options = parseOptions(op, rawOptions, 'field');
  const loaded = Object.fromEntries(Object.entries(inputs).map(([k, v]) => [k, typeof v === 'string' ? fileInput(v) : v]));
  const progress: ProgressEvent[] = [];
  const warnings: string[] = [];
  const dir = tempDir('imgtool-run-');
  const ctx: RunContext = {
    signal,
    onProgress: (e) => progress.push(e),
    warn: (m) => warnings.push(m),
    tempPath: (ext) => join(dir, `${randomUUID()}.${ext}`),
  };
  const pipeline = await op.load();
  const result = await pipeline({ operation: name, inputs: loaded, options }, ctx);
  return { result, progress, warnings };
}

import { stat } from 'node:fs/promises';
import { basename, extname, resolve } from 'node:path';
import { glob, isDynamicPattern } from 'tinyglobby';
import { ImgtoolError } from '../errors.js';
import type { MediaKind } from '../ops/define.js';
import type { InputRef } from '../ops/executor.js';

export type { InputRef };

export const IMAGE_EXTENSIONS = ['jpg', 'jpeg', 'png', 'webp', 'heic', 'heif', 'avif', 'gif', 'tif', 'tiff'];
export const VIDEO_EXTENSIONS = ['mp4', 'mov', 'webm', 'mkv', 'gif', 'm4v', 'avi'];

function extensionsFor(kind: MediaKind): string[] {
  return kind === 'video' ? VIDEO_EXTENSIONS : IMAGE_EXTENSIONS;
}

export function refName(ref: InputRef): string {
  return ref.kind === 'file' ? ref.display : ref.kind === 'url' ? ref.url : 'stdin';
}

function isUrl(s: string): boolean {
  return /^https?:\/\//i.test(s);
}

/**
 * Expands positional inputs: files, directories (their supported media, not recursive),
 * quoted globs, http(s) URLs and `-` for stdin. Order is kept, duplicates removed; a pattern
 * or path that matches nothing is an error naming it.
 */
export async function expandInputs(args: readonly string[], kind: MediaKind, cwd: string = process.cwd(), opts: { skipName?: (name: string) => boolean } = {}): Promise<InputRef[]> {
  const out: InputRef[] = [];
  const seen = new Set<string>();
  const push = (ref: InputRef) => {
    const key = ref.kind === 'file' ? ref.path : refName(ref);
    if (seen.has(key)) return;
    seen.add(key);
    out.push(ref);
  };
  const exts = extensionsFor(kind);
  for (const arg of args) {
    if (arg === '-') {
      push({ kind: 'stdin' });
      continue;
    }
    if (isUrl(arg)) {
      push({ kind: 'url', url: arg });
      continue;
    }
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(arg)) {
      throw new ImgtoolError(kind === 'video' ? 'invalid_video_url' : 'invalid_image_url', `${arg}: only http(s) URLs are supported`);
    }
    const st = await stat(resolve(cwd, arg)).catch(() => undefined);
    if (st?.isFile()) {
      push({ kind: 'file', path: resolve(cwd, arg), display: arg });
      continue;
    }
    if (st?.isDirectory()) {
      const files = await glob(`*.{${exts.join(',')}}`, { cwd: resolve(cwd, arg), caseSensitiveMatch: false, onlyFiles: true });
      if (!files.length) throw new ImgtoolError('input_not_found', `${arg} contains no ${kind === 'video' ? 'videos' : 'images'} (looked for ${exts.join(', ')})`);
      for (const f of files.sort().filter((f) => !opts.skipName?.(basename(f)))) push({ kind: 'file', path: resolve(cwd, arg, f), display: `${arg.replace(/\/+$/, '')}/${f}` });
      continue;
    }
    if (isDynamicPattern(arg)) {
      const files = (await glob(arg, { cwd, onlyFiles: true, expandDirectories: false })).sort();
      const media = files.filter((f) => exts.includes(extname(f).slice(1).toLowerCase()) && !opts.skipName?.(basename(f)));
      if (!files.length) throw new ImgtoolError('input_not_found', `no files match ${arg}`);
      if (!media.length && files.every((f) => opts.skipName?.(basename(f)))) continue;
      // Files named explicitly by a pattern are kept even with odd extensions: the decoder judges them.
      for (const f of media.length ? media : files) push({ kind: 'file', path: resolve(cwd, f), display: f });
      continue;
    }
    throw new ImgtoolError('input_not_found', `${arg}: no such file or directory`);
  }
  return out;
}

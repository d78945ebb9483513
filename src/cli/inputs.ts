import { readFile, stat } from 'node:fs/promises';
import { basename, dirname, extname, isAbsolute, relative, resolve, sep } from 'node:path';
import picomatch from 'picomatch';
import { glob, isDynamicPattern } from 'tinyglobby';
import { ImgtoolError } from '../errors.js';
import type { MediaKind } from '../ops/define.js';
import type { InputRef } from '../ops/executor.js';

export type { InputRef };

export const IMAGE_EXTENSIONS = ['jpg', 'jpeg', 'png', 'webp', 'heic', 'heif', 'avif', 'gif', 'tif', 'tiff'];
export const VIDEO_EXTENSIONS = ['mp4', 'mov', 'webm', 'mkv', 'gif', 'm4v', 'avi'];

export function extensionsFor(kind: MediaKind): string[] {
  return kind === 'video' ? VIDEO_EXTENSIONS : IMAGE_EXTENSIONS;
}

export function refName(ref: InputRef): string {
  return ref.kind === 'file' ? ref.display : ref.kind === 'url' ? ref.url : 'stdin';
}

/**
 * How a ref is written in a list file (--failures, read back by --from-file): the path as given,
 * with rsync's `/./` marker between the root and the mirrored part, so a rerun writes the
 * output to the same place in the --out-dir tree.
 */
export function refLine(ref: InputRef): string {
  if (ref.kind !== 'file' || !ref.rel) return refName(ref);
  const tail = `${ref.rel}/${basename(ref.path)}`;
  const d = ref.display;
  return d.endsWith(tail) ? `${d.slice(0, d.length - tail.length)}./${tail}` : d;
}

function isUrl(s: string): boolean {
  return /^https?:\/\//i.test(s);
}

/** Files no one means to process: macOS, Windows and editor droppings. Hidden files are skipped too. */
const LITTER = new Set(['thumbs.db', 'desktop.ini', 'ehthumbs.db', '.ds_store']);

/** True for hidden files or folders (`.x`, which covers `._x` and our own `.imgtool-tmp-*`) and OS litter. */
export function isLitter(relPath: string): boolean {
  return relPath.split(/[\\/]/).some((seg) => (seg.startsWith('.') && seg !== '.' && seg !== '..') || LITTER.has(seg.toLowerCase()));
}

export interface ExpandOptions {
  /** Names to leave out (the operation's own earlier outputs). */
  skipName?: (name: string) => boolean;
  /** Descend into subdirectories of directory inputs. */
  recursive?: boolean;
  /** Globs a file must match (any of), relative to its directory input or as written for patterns; no slash = any depth by name. */
  include?: string[];
  /** Globs that remove a file, or a whole folder by name. */
  exclude?: string[];
}

/** One matcher for --include/--exclude: a pattern without a slash matches by file (or folder) name at any depth. */
function filterFor(opts: ExpandOptions): (relPath: string) => boolean {
  const mk = (patterns: string[] | undefined) =>
    patterns?.length
      ? picomatch(
          patterns.map((p) => (p.includes('/') ? p.replace(/^\.\//, '') : `**/${p}`)),
          { nocase: true, dot: false },
        )
      : undefined;
  const inc = mk(opts.include);
  const exc = mk(opts.exclude);
  return (rel) => {
    const p = rel.split(sep).join('/');
    if (inc && !inc(p)) return false;
    if (exc) {
      // An excluded folder name removes everything under it.
      const parts = p.split('/');
      for (let i = 1; i <= parts.length; i++) if (exc(parts.slice(0, i).join('/'))) return false;
    }
    return true;
  };
}

/** The part of a pattern before its first magic segment: `photos/**\/*.jpg` -> `photos`. */
function staticBase(pattern: string): string {
  const parts = pattern.split('/');
  const out: string[] = [];
  for (const p of parts) {
    if (isDynamicPattern(p)) break;
    out.push(p);
  }
  return out.join('/') || '.';
}

/** `photos/./2024/a.jpg` (rsync's marker) -> root `photos`, mirrored part `2024`. */
function splitMarker(arg: string): { path: string; rel?: string } {
  const i = arg.indexOf('/./');
  if (i < 0) return { path: arg };
  const tail = arg.slice(i + 3);
  const rel = dirname(tail);
  return { path: `${arg.slice(0, i)}/${tail}`, rel: rel === '.' ? undefined : rel };
}

/**
 * Expands positional inputs: files, directories (their supported media; with `recursive` the
 * whole tree), quoted globs, http(s) URLs and `-` for stdin. Order is kept, duplicates removed;
 * a pattern or path that matches nothing is an error naming it. Hidden files, hidden folders
 * and OS litter found in directories and patterns are always skipped; --include/--exclude
 * narrow what directories and patterns yield. Files named one by one are taken as given.
 */
export async function expandInputs(args: readonly string[], kind: MediaKind, cwd: string = process.cwd(), opts: ExpandOptions = {}): Promise<InputRef[]> {
  const out: InputRef[] = [];
  const seen = new Set<string>();
  const push = (ref: InputRef) => {
    const key = ref.kind === 'file' ? ref.path : refName(ref);
    if (seen.has(key)) return;
    seen.add(key);
    out.push(ref);
  };
  const exts = extensionsFor(kind);
  const hasExt = (f: string) => exts.includes(extname(f).slice(1).toLowerCase());
  const wanted = filterFor(opts);
  const keep = (rel: string) => !isLitter(rel) && !opts.skipName?.(basename(rel)) && wanted(rel);
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
    const marked = splitMarker(arg);
    const st = await stat(resolve(cwd, marked.path)).catch(() => undefined);
    if (st?.isFile()) {
      push({ kind: 'file', path: resolve(cwd, marked.path), display: marked.path, ...(marked.rel ? { rel: marked.rel } : {}) });
      continue;
    }
    if (st?.isDirectory()) {
      const root = resolve(cwd, arg);
      const found = await glob(opts.recursive ? '**/*' : '*', { cwd: root, onlyFiles: true, dot: false, followSymbolicLinks: false });
      const files = found.filter((f) => hasExt(f) && keep(f)).sort();
      if (!files.length) {
        const what = kind === 'video' ? 'videos' : 'images';
        const hint = opts.recursive ? '' : found.length || (await hasSubdirs(root)) ? '; add -r to look in subfolders' : '';
        throw new ImgtoolError(
          'input_not_found',
          `${arg} contains no ${what}${opts.include?.length || opts.exclude?.length ? ' matching --include/--exclude' : ''} (looked for ${exts.join(', ')}${hint})`,
        );
      }
      const prefix = arg.replace(/\/+$/, '');
      for (const f of files) {
        const rel = dirname(f);
        push({ kind: 'file', path: resolve(root, f), display: `${prefix}/${f}`, ...(rel !== '.' ? { rel } : {}) });
      }
      continue;
    }
    if (isDynamicPattern(arg)) {
      const files = (await glob(arg, { cwd, onlyFiles: true, expandDirectories: false, dot: false })).sort();
      if (!files.length) throw new ImgtoolError('input_not_found', `no files match ${arg}`);
      const base = staticBase(arg);
      const relTo = (f: string) => (isAbsolute(base) ? relative(base, resolve(cwd, f)) : relative(base, f));
      const kept = files.filter((f) => keep(relTo(f)));
      const media = kept.filter(hasExt);
      // Files named explicitly by a pattern are kept even with odd extensions: the decoder judges them.
      for (const f of media.length ? media : kept) {
        const rel = dirname(relTo(f));
        push({ kind: 'file', path: resolve(cwd, f), display: f, ...(rel !== '.' && !rel.startsWith('..') ? { rel } : {}) });
      }
      continue;
    }
    throw new ImgtoolError('input_not_found', `${arg}: no such file or directory`);
  }
  return out;
}

async function hasSubdirs(dir: string): Promise<boolean> {
  return (await glob('*/', { cwd: dir, onlyDirectories: true, dot: false })).length > 0;
}

/**
 * Reads a list of inputs (--from-file FILE, or `-` for stdin): one per line, or NUL-separated
 * (`find -print0`). Blank lines and lines starting with `#` are ignored; relative paths are
 * relative to the current directory, like the same words on the command line.
 */
export async function readInputList(source: string, cwd: string, stdin: NodeJS.ReadableStream): Promise<string[]> {
  let text: string;
  if (source === '-') {
    const chunks: Buffer[] = [];
    for await (const c of stdin) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(c as string));
    text = Buffer.concat(chunks).toString('utf8');
  } else {
    text = await readFile(resolve(cwd, source), 'utf8').catch((err: NodeJS.ErrnoException) => {
      throw new ImgtoolError('input_not_found', `--from-file ${source}: ${err.code === 'ENOENT' ? 'no such file' : err.message}`);
    });
  }
  const items = text.includes('\0') ? text.split('\0') : text.split(/\r?\n/);
  return items.map((l) => (text.includes('\0') ? l : l.trim())).filter((l) => l && !l.startsWith('#'));
}

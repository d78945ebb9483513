import { basename, dirname, extname, resolve } from 'node:path';
import { ImgtoolError } from '../errors.js';
import { refName, type InputRef } from './inputs.js';

export const DEFAULT_TEMPLATE = '{name}.{op}.{ext}';

/** Base name of an input without its extension: "photos/cat.jpg" -> "cat". */
export function stem(ref: InputRef): string {
  if (ref.kind === 'stdin') return 'stdin';
  const raw = ref.kind === 'file' ? basename(ref.path) : basename(new URL(ref.url).pathname) || 'download';
  const ext = extname(raw);
  return ext ? raw.slice(0, -ext.length) : raw;
}

/**
 * Renders the output name template. `{name}`, `{op}`, `{ext}` and `{index}` (also written
 * `<name>` etc.) are replaced; anything else is kept literally.
 */
export function renderTemplate(template: string, vars: { name: string; op: string; ext: string; index: number }): string {
  return template.replace(/[{<](name|op|ext|index)[}>]/g, (_m, key: keyof typeof vars) => String(vars[key]));
}

export interface OutputPlan {
  /** Absolute final path for a known extension. */
  pathFor: (ext: string) => string;
  dir: string;
}

/** Where an input's output goes: beside the input, or inside --out-dir, mirroring its folder (URLs and stdin: cwd). */
export function planOutput(refs: InputRef[], op: string, opts: { outDir?: string; template: string; index: number; cwd?: string }): OutputPlan {
  const primary = refs[0]!;
  const cwd = opts.cwd ?? process.cwd();
  // Inside --out-dir, files found in a folder tree keep their place in it (2024/a.jpg -> out/2024/).
  const mirrored = primary.kind === 'file' && primary.rel ? primary.rel : '.';
  const dir = opts.outDir !== undefined ? resolve(cwd, opts.outDir, mirrored) : resolve(cwd, primary.kind === 'file' ? dirname(primary.path) : '.');
  // Several inputs (try-on person + garment) name the output after all of them.
  const name = refs.map(stem).join('+');
  const pathFor = (ext: string) => {
    const rendered = renderTemplate(opts.template, { name, op, ext, index: opts.index });
    const full = resolve(dir, rendered);
    for (const r of refs) {
      if (r.kind === 'file' && r.path === full) {
        throw new ImgtoolError('invalid_parameter', `the output for ${refName(r)} would overwrite the input itself; change --name or --out-dir`);
      }
    }
    return full;
  };
  return { pathFor, dir };
}

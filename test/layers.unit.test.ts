// The layers of docs/architecture.md, checked on the source: adapters (cli, server, client) ->
// ops -> vision -> engine/media. No operation imports another operation (shared code lives in
// src/vision/), and nothing below the operations imports an operation or an adapter.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '..', 'src');

function* sources(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* sources(p);
    else if (name.endsWith('.ts')) yield p;
  }
}

/** Every relative import of `file`, resolved to a path under src/ (e.g. `ops/upscale/index.ts`). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)) {
    const target = resolve(dirname(file), m[1]!.replace(/\.js$/, '.ts'));
    out.push(relative(SRC, target).split(sep).join('/'));
  }
  return out;
}

const files = [...sources(SRC)].map((f) => ({ path: relative(SRC, f).split(sep).join('/'), imports: importsOf(f) }));

/** The operation folder a src path belongs to (`ops/try-on/x.ts` -> `try-on`), or undefined. */
const opOf = (p: string): string | undefined => /^ops\/([^/]+)\//.exec(p)?.[1];

describe('layers', () => {
  it('scans the source tree', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(files.some((f) => f.path === 'vision/cutout/cutout.ts')).toBe(true);
  });

  it('no operation imports another operation', () => {
    const bad = files.flatMap((f) => {
      const own = opOf(f.path);
      if (!own) return [];
      return f.imports.filter((i) => opOf(i) !== undefined && opOf(i) !== own).map((i) => `${f.path} -> ${i}`);
    });
    expect(bad).toEqual([]);
  });

  it('vision, engine and media import no operation and no adapter', () => {
    const below = /^(vision|engine|media)\//;
    const above = /^(ops|cli|server|client)\//;
    const bad = files.filter((f) => below.test(f.path)).flatMap((f) => f.imports.filter((i) => above.test(i)).map((i) => `${f.path} -> ${i}`));
    expect(bad).toEqual([]);
  });

  it('engine and media import nothing from vision', () => {
    const bad = files
      .filter((f) => /^(engine|media)\//.test(f.path))
      .flatMap((f) => f.imports.filter((i) => i.startsWith('vision/')).map((i) => `${f.path} -> ${i}`));
    expect(bad).toEqual([]);
  });
});

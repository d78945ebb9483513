import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, test } from 'vitest';
import { BUILT_IN_OPERATIONS } from '../../src/ops/registry.js';

/**
 * The contract has no leaks: outside src/ops/ no code names an operation or its paths (what an
 * operation needs is a field of its definition), and the layers import downwards only.
 */

const SRC = resolve(__dirname, '../../src');

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** Source without comments, so prose may still mention an operation. */
function code(path: string): string {
  return readFileSync(path, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '')
    .replace(/\s\/\/.*$/gm, '');
}

const all = files(SRC).map((f) => ({ rel: relative(SRC, f), text: code(f) }));
const outsideOps = all.filter((f) => !f.rel.startsWith('ops/'));
// The engine names model tasks ('segment', 'upscale'), which are not operations.
const adapters = outsideOps.filter((f) => !f.rel.startsWith('engine/'));

describe('no per-operation checks outside src/ops', () => {
  test('the scan sees the adapters', () => {
    expect(adapters.map((f) => f.rel)).toEqual(expect.arrayContaining(['server/plugins/routes.ts', 'server/openapi.ts', 'client/api.ts', 'cli/program.ts']));
  });

  test.each(BUILT_IN_OPERATIONS.map((op) => [op.name, op] as const))('%s: neither its name nor its paths appear as literals', (name, op) => {
    const literals = [name, op.path, ...(op.jobPath ? [op.jobPath] : [])];
    const hits = adapters.flatMap((f) => literals.filter((l) => new RegExp(`['"\`]${l.replace(/[/-]/g, '\\$&')}`).test(f.text)).map((l) => `${f.rel}: ${l}`));
    expect(hits).toEqual([]);
  });

  test('no name comparisons or path-prefix checks on operations', () => {
    const bad = /\bop\.name\s*[!=]==|\.path\.startsWith\(|['"`]\/v1\/video\//;
    expect(outsideOps.filter((f) => bad.test(f.text)).map((f) => f.rel)).toEqual([]);
  });

  test('no casts where options meet an operation (the registry keeps the types)', () => {
    const cast = /op\.(cost|outputExt)\([^)]*\bas (never|unknown)\b/;
    expect(all.filter((f) => cast.test(f.text) || /as unknown as readonly OperationDefinition/.test(f.text)).map((f) => f.rel)).toEqual([]);
  });
});

describe('dependencies point down', () => {
  const imports = (f: { text: string }) => [...f.text.matchAll(/from '([^']+)'/g)].map((m) => m[1]!);
  test.each([
    ['client/', /\/cli\//],
    ['media/', /\/(ops|cli|server|client|engine)\//],
    ['engine/', /\/(ops|cli|server|client)\//],
    ['ops/', /\/(cli|server|client)\//],
    ['server/', /\/(cli|client)\//],
  ] as const)('%s imports nothing from %s', (dir, forbidden) => {
    const bad = all
      .filter((f) => f.rel.startsWith(dir))
      .flatMap((f) =>
        imports(f)
          .filter((i) => forbidden.test(i))
          .map((i) => `${f.rel}: ${i}`),
      );
    expect(bad).toEqual([]);
  });
});

// A stranger's clone has nothing beside it: no test, bench or script may read a path outside
// the repository (the sibling shared folder's fixtures were such a path once). Every string literal with a
// relative path is resolved from its file's folder; none may leave the repository, and no
// literal may name an absolute path on this machine.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');
const SCANNED = ['test', 'bench', 'scripts', 'models', '.ci'];

function* files(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'build' || name === 'out' || name === 'fixtures' || name === '.tmp') continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* files(p);
    else if (/\.(ts|mts|js|mjs|cjs|sh)$|^run$/.test(name)) yield p;
  }
}

/** Literals that escape the repository when resolved from `file`'s folder, with their line numbers. */
function escapes(file: string, text: string): string[] {
  const found: string[] = [];
  const lines = text.split('\n');
  lines.forEach((line, i) => {
    for (const m of line.matchAll(/(['"`])((?:\.\.\/|\.\/)[^'"`$]*|\/(?:work|home|root|tmp\/shared)\/[^'"`]*)\1/g)) {
      const lit = m[2]!;
      if (lit.startsWith('/')) {
        found.push(`${relative(ROOT, file)}:${i + 1}: ${lit}`);
        continue;
      }
      const target = resolve(dirname(file), lit);
      if (relative(ROOT, target).startsWith('..')) found.push(`${relative(ROOT, file)}:${i + 1}: ${lit}`);
    }
    if (/shared\/fixtures/.test(line) && !line.includes('escapes(')) found.push(`${relative(ROOT, file)}:${i + 1}: names the sibling fixtures folder`);
  });
  return found;
}

describe('the repository is self-contained', () => {
  it('no test, bench or script reads a path outside it', () => {
    const bad: string[] = [];
    for (const dir of SCANNED) for (const f of files(join(ROOT, dir))) if (f !== import.meta.filename) bad.push(...escapes(f, readFileSync(f, 'utf8')));
    expect(bad).toEqual([]);
  });

  it('the check itself catches an escaping path', () => {
    const sibling = ['..', '..', 'shared', 'fixtures'].join('/');
    expect(escapes(join(ROOT, 'bench/x.mjs'), `const F = resolve(here, '${sibling}');`)).toHaveLength(2);
    expect(escapes(join(ROOT, 'test/ops/x/y.test.ts'), "import { a } from '../../../src/a.js';")).toEqual([]);
    expect(escapes(join(ROOT, 'test/a.test.ts'), `const p = '/work/${sibling.slice(6)}/images/a.png';`)).toHaveLength(2);
  });
});

import { describe, expect, it } from 'vitest';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { expandInputs, isLitter, readInputList, refLine, type InputRef } from '../../src/cli/inputs.js';
import { planOutput } from '../../src/cli/naming.js';
import { tempDir } from '../helpers.js';

/** Input expansion only looks at names, so empty files stand in for photos here. */
function tree(files: string[]): string {
  const cwd = tempDir('imgtool-tree-');
  for (const f of files) {
    mkdirSync(join(cwd, f, '..'), { recursive: true });
    writeFileSync(join(cwd, f), '');
  }
  return cwd;
}

const displays = (refs: InputRef[]) => refs.map((r) => (r.kind === 'file' ? r.display : r.kind));
const PHOTOS = ['photos/a.jpg', 'photos/2024/a.jpg', 'photos/2024/b.png', 'photos/2025/a.jpg', 'photos/2025/drafts/c.jpg', 'photos/2025/a-small.jpg'];
const LITTER = [
  'photos/.DS_Store',
  'photos/._a.jpg',
  'photos/2024/Thumbs.db',
  'photos/2024/desktop.ini',
  'photos/.thumbnails/a.jpg',
  'photos/2024/.hidden.jpg',
  'photos/2025/.imgtool-tmp-1234.png',
];

describe('directory trees (-r)', () => {
  it("without -r takes the top folder only; with -r the whole tree, sorted, with each file's folder", async () => {
    const cwd = tree(PHOTOS);
    expect(displays(await expandInputs(['photos'], 'image', cwd))).toEqual(['photos/a.jpg']);
    const refs = await expandInputs(['photos/'], 'image', cwd, { recursive: true });
    expect(displays(refs)).toEqual([
      'photos/2024/a.jpg',
      'photos/2024/b.png',
      'photos/2025/a-small.jpg',
      'photos/2025/a.jpg',
      'photos/2025/drafts/c.jpg',
      'photos/a.jpg',
    ]);
    expect(refs.map((r) => (r.kind === 'file' ? (r.rel ?? '') : ''))).toEqual(['2024', '2024', '2025', '2025', '2025/drafts', '']);
  });

  it('mirrors the tree under --out-dir, so same-named files in different folders do not collide', async () => {
    const cwd = tree(PHOTOS);
    const refs = await expandInputs(['photos'], 'image', cwd, { recursive: true });
    const outs = refs.map((r, i) => planOutput([r], 'upscale', { outDir: 'out', template: '{name}.{op}.{ext}', index: i + 1, cwd }).pathFor('jpg'));
    expect(new Set(outs).size).toBe(outs.length);
    expect(outs).toContain(join(cwd, 'out/2024/a.upscale.jpg'));
    expect(outs).toContain(join(cwd, 'out/2025/a.upscale.jpg'));
    expect(outs).toContain(join(cwd, 'out/2025/drafts/c.upscale.jpg'));
    expect(outs).toContain(join(cwd, 'out/a.upscale.jpg'));
    // Without --out-dir each output stays beside its input.
    expect(planOutput([refs[4]!], 'upscale', { template: '{name}.{op}.{ext}', index: 1, cwd }).pathFor('jpg')).toBe(
      join(cwd, 'photos/2025/drafts/c.upscale.jpg'),
    );
  });

  it('mirrors recursive patterns relative to their fixed part', async () => {
    const cwd = tree(PHOTOS);
    const refs = await expandInputs(['photos/**/a.jpg'], 'image', cwd);
    expect(refs.map((r) => (r.kind === 'file' ? [r.display, r.rel] : []))).toEqual([
      ['photos/2024/a.jpg', '2024'],
      ['photos/2025/a.jpg', '2025'],
      ['photos/a.jpg', undefined],
    ]);
  });

  it('says to add -r when a folder has only subfolders', async () => {
    const cwd = tree(['only/sub/a.jpg']);
    await expect(expandInputs(['only'], 'image', cwd)).rejects.toThrow('add -r to look in subfolders');
    expect(displays(await expandInputs(['only'], 'image', cwd, { recursive: true }))).toEqual(['only/sub/a.jpg']);
  });
});

describe('--include / --exclude', () => {
  it('include narrows by name at any depth or by path; exclude removes files and whole folders', async () => {
    const cwd = tree(PHOTOS);
    const r = (o: { include?: string[]; exclude?: string[] }) => expandInputs(['photos'], 'image', cwd, { recursive: true, ...o }).then(displays);
    expect(await r({ include: ['*.png'] })).toEqual(['photos/2024/b.png']);
    expect(await r({ include: ['2025/**'] })).toEqual(['photos/2025/a-small.jpg', 'photos/2025/a.jpg', 'photos/2025/drafts/c.jpg']);
    expect(await r({ exclude: ['drafts', '*-small.jpg'] })).toEqual(['photos/2024/a.jpg', 'photos/2024/b.png', 'photos/2025/a.jpg', 'photos/a.jpg']);
    expect(await r({ include: ['2025/**'], exclude: ['drafts'] })).toEqual(['photos/2025/a-small.jpg', 'photos/2025/a.jpg']);
    // Case-insensitive, like the extension match.
    expect(await r({ include: ['*.PNG'] })).toEqual(['photos/2024/b.png']);
  });

  it('applies to patterns too, and a filter that leaves a folder empty is named in the message', async () => {
    const cwd = tree(PHOTOS);
    expect(displays(await expandInputs(['photos/**/*.jpg'], 'image', cwd, { exclude: ['2025'] }))).toEqual(['photos/2024/a.jpg', 'photos/a.jpg']);
    await expect(expandInputs(['photos'], 'image', cwd, { recursive: true, include: ['*.webp'] })).rejects.toThrow('matching --include/--exclude');
  });
});

describe('litter', () => {
  it('hidden files and folders and OS litter are always skipped in folders and patterns', async () => {
    const cwd = tree([...PHOTOS, ...LITTER]);
    const all = displays(await expandInputs(['photos'], 'image', cwd, { recursive: true }));
    expect(all).toHaveLength(PHOTOS.length);
    for (const l of LITTER) expect(all).not.toContain(l);
    const globbed = displays(await expandInputs(['photos/**/*'], 'image', cwd));
    expect(globbed.sort()).toEqual([...PHOTOS].sort());
    // A file named on purpose is taken as given.
    expect(displays(await expandInputs(['photos/2024/.hidden.jpg'], 'image', cwd))).toEqual(['photos/2024/.hidden.jpg']);
  });

  it('knows the names', () => {
    for (const l of ['.DS_Store', 'x/._a.jpg', 'Thumbs.db', 'a/DESKTOP.INI', '.git/a.jpg', 'ehthumbs.db']) expect(isLitter(l), l).toBe(true);
    for (const l of ['a.jpg', 'x/b.png', './a.jpg', 'thumbs.jpg']) expect(isLitter(l), l).toBe(false);
  });
});

describe('--from-file lists', () => {
  it('reads lines or NUL-separated names, skipping blanks and comments', async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'list.txt'), '# photos to redo\nphotos/a.jpg\r\n\n  photos/2024/b.png  \nhttps://x.org/c.jpg\n');
    expect(await readInputList('list.txt', cwd, Readable.from([]))).toEqual(['photos/a.jpg', 'photos/2024/b.png', 'https://x.org/c.jpg']);
    expect(await readInputList('-', cwd, Readable.from([Buffer.from('a b.jpg\0c.jpg\0')]))).toEqual(['a b.jpg', 'c.jpg']);
    await expect(readInputList('nope.txt', cwd, Readable.from([]))).rejects.toThrow('--from-file nope.txt: no such file');
  });

  it("writes a tree input with rsync's /./ marker, and reading it back keeps its place in the tree", async () => {
    const cwd = tree(PHOTOS);
    const refs = await expandInputs(['photos'], 'image', cwd, { recursive: true });
    const lines = refs.map(refLine);
    expect(lines).toContain('photos/./2025/drafts/c.jpg');
    expect(lines).toContain('photos/a.jpg');
    expect(await expandInputs(lines, 'image', cwd)).toEqual(refs);
  });
});

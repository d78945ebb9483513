import { describe, expect, it } from 'vitest';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expandInputs } from '../../src/cli/inputs.js';
import { planOutput, renderTemplate } from '../../src/cli/naming.js';
import { fixture, tempDir } from '../helpers.js';

function tree() {
  const dir = tempDir();
  mkdirSync(join(dir, 'photos/sub'), { recursive: true });
  for (const n of ['a.jpg', 'b.PNG', 'notes.txt', 'sub/c.jpg']) copyFileSync(fixture('images/fruits.jpg'), join(dir, 'photos', n));
  writeFileSync(join(dir, 'photos/notes.txt'), 'hello');
  return dir;
}

describe('input expansion', () => {
  it('expands directories to their supported media, not recursively, sorted', async () => {
    const cwd = tree();
    expect(await expandInputs(['photos'], 'image', cwd)).toEqual([
      { kind: 'file', path: join(cwd, 'photos/a.jpg'), display: 'photos/a.jpg' },
      { kind: 'file', path: join(cwd, 'photos/b.PNG'), display: 'photos/b.PNG' },
    ]);
  });

  it('expands quoted globs, recursive ones too', async () => {
    const cwd = tree();
    expect(await expandInputs(['photos/*.jpg'], 'image', cwd)).toEqual([{ kind: 'file', path: join(cwd, 'photos/a.jpg'), display: 'photos/a.jpg' }]);
    expect((await expandInputs(['photos/**/*.jpg'], 'image', cwd)).map((r) => (r as { display: string }).display)).toEqual([
      'photos/a.jpg',
      'photos/sub/c.jpg',
    ]);
  });

  it('removes duplicates across files, globs and directories', async () => {
    const cwd = tree();
    const refs = await expandInputs(['photos/a.jpg', 'photos/*.jpg', './photos/a.jpg', 'photos'], 'image', cwd);
    expect(refs.map((r) => (r as { display: string }).display)).toEqual(['photos/a.jpg', 'photos/b.PNG']);
  });

  it('passes URLs and stdin through', async () => {
    expect(await expandInputs(['https://example.com/x.jpg', '-', 'http://h/y.png'], 'image')).toEqual([
      { kind: 'url', url: 'https://example.com/x.jpg' },
      { kind: 'stdin' },
      { kind: 'url', url: 'http://h/y.png' },
    ]);
  });

  it('names the pattern or path that matched nothing', async () => {
    const cwd = tree();
    await expect(expandInputs(['photos/*.webp'], 'image', cwd)).rejects.toThrow('no files match photos/*.webp');
    await expect(expandInputs(['missing.jpg'], 'image', cwd)).rejects.toThrow('missing.jpg: no such file or directory');
    await expect(expandInputs(['ftp://x/y.jpg'], 'image', cwd)).rejects.toMatchObject({ code: 'invalid_image_url' });
    mkdirSync(join(cwd, 'empty'));
    await expect(expandInputs(['empty'], 'image', cwd)).rejects.toThrow('empty contains no images');
  });
});

describe('output naming', () => {
  it('renders the template beside the input or in --out-dir', () => {
    expect(renderTemplate('{name}.{op}.{ext}', { name: 'cat', op: 'upscale', ext: 'jpg', index: 1 })).toBe('cat.upscale.jpg');
    expect(renderTemplate('<name>-<index>.<ext>', { name: 'cat', op: 'upscale', ext: 'png', index: 3 })).toBe('cat-3.png');
    const beside = planOutput([{ kind: 'file', path: '/w/photos/cat.jpg', display: 'photos/cat.jpg' }], 'upscale', {
      template: '{name}.{op}.{ext}',
      index: 1,
      cwd: '/w',
    });
    expect(beside.pathFor('jpg')).toBe('/w/photos/cat.upscale.jpg');
    const inOut = planOutput([{ kind: 'url', url: 'https://x.org/img/dog.png?x=1' }], 'outpaint', {
      outDir: 'out',
      template: '{name}.{op}.{ext}',
      index: 1,
      cwd: '/w',
    });
    expect(inOut.pathFor('png')).toBe('/w/out/dog.outpaint.png');
  });

  it('refuses a template that would overwrite the input', () => {
    const plan = planOutput([{ kind: 'file', path: '/w/photos/cat.jpg', display: 'photos/cat.jpg' }], 'upscale', {
      template: '{name}.{ext}',
      index: 1,
      cwd: '/w',
    });
    expect(() => plan.pathFor('jpg')).toThrow('would overwrite the input itself');
  });
});

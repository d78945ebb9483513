#!/usr/bin/env node
/**
 * Real photos through the CLI, over a flat colour, side by side with the input: plant.jpg (its
 * leaves must be kept), butterfly.jpg (its antennae) and the shipped samples/*.jpg. Writes
 * bench/out/remove-background-photos.png, to open and look at (issue 32).
 *
 *   npx tsc -p tsconfig.json && node bench/remove-background-photos.mjs [--colour '#30a030'] [--keep auto|all|largest]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import sharp from 'sharp';

const ROOT = join(import.meta.dirname, '..');
const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const colour = arg('colour', '#30a030');
const keep = arg('keep', 'auto');
// samples/butterfly.jpg is the fixture's butterfly.jpg: each name once.
const samples = readdirSync(join(ROOT, 'samples')).filter((f) => f.endsWith('.jpg'));
const photos = [
  join(ROOT, 'test/fixtures/images/plant.jpg'),
  ...(samples.includes('butterfly.jpg') ? [] : [join(ROOT, 'test/fixtures/images/butterfly.jpg')]),
  ...samples.map((f) => join(ROOT, 'samples', f)),
];
const out = mkdtempSync(join(tmpdir(), 'imgtool-photos-'));
execFileSync(process.execPath, [join(ROOT, 'bin/imgtool.js'), 'remove-background', ...photos, '-o', out, '--background-color', colour, '--keep', keep], {
  stdio: 'inherit',
});
const tw = 400;
const tiles = [];
let y = 0;
for (const p of photos) {
  const name = basename(p).replace(/\.[^.]+$/, '');
  const a = await sharp(p).resize(tw).png().toBuffer();
  const b = await sharp(join(out, `${name}.remove-background.png`))
    .resize(tw)
    .png()
    .toBuffer();
  const h = (await sharp(a).metadata()).height;
  tiles.push({ input: a, left: 0, top: y }, { input: b, left: tw + 4, top: y });
  y += h + 4;
}
const file = join(ROOT, 'bench', 'out', `remove-background-photos${keep === 'auto' ? '' : `-${keep}`}.png`);
await sharp({ create: { width: 2 * tw + 4, height: y, channels: 3, background: '#222' } })
  .composite(tiles)
  .png()
  .toFile(file);
console.log(file);

#!/usr/bin/env node
/**
 * Round 10: where the rule for backdrop seen through the subject's opening (opening.ts) changes a
 * cut-out at all, on real photos: every fixture image (people and not) and samples/*, the
 * default cut-out (cutoutSubject, people assist on) with the rule and without it. Prints the
 * pixels whose alpha moved by more than 20 and, for each changed image, writes image | without |
 * with to bench/out/remove-background/opening/<name>.png to look at.
 *
 *   npx tsc -p tsconfig.json && node bench/remove-background-opening-check.mjs
 */
import { mkdirSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { FIXTURES } from './fixtures.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const OUT = join(HERE, 'out', 'remove-background', 'opening');
const DIST = resolve(HERE, '../dist');
const { cutoutSubject } = await import(join(DIST, 'vision/cutout/cutout.js'));
const { DEFAULT_FUSION } = await import(join(DIST, 'vision/cutout/fusion.js'));
const { decodeImage } = await import(join(DIST, 'media/image.js'));
const { removeBackground } = await import(join(DIST, 'ops/remove-background/index.js'));
const { readFileSync } = await import('node:fs');

const files = [
  ...readdirSync(join(FIXTURES, 'images')).map((f) => join(FIXTURES, 'images', f)),
  ...readdirSync(resolve(HERE, '../samples')).map((f) => resolve(HERE, '../samples', f)),
].filter((f) => /\.(png|jpe?g)$/i.test(f));
mkdirSync(OUT, { recursive: true });
const rule = DEFAULT_FUSION.opening;
let changedImages = 0;
for (const file of files) {
  const data = readFileSync(file);
  const img = await decodeImage({ name: file, data, size: data.length }, removeBackground.limits, 'remove-background');
  DEFAULT_FUSION.opening = undefined;
  const without = (await cutoutSubject(img)).mask;
  DEFAULT_FUSION.opening = rule;
  const withRule = (await cutoutSubject(img)).mask;
  let changed = 0;
  for (let i = 0; i < without.length; i++) if (Math.abs(without[i] - withRule[i]) > 20) changed++;
  console.log(`${file.split('/').pop().padEnd(22)} ${img.width}x${img.height} pixels changed ${changed} (${((100 * changed) / without.length).toFixed(2)}%)`);
  if (!changed) continue;
  changedImages++;
  const { width: w, height: h } = img;
  const rgb = await sharp(data).rotate().removeAlpha().resize(w, h).png().toBuffer();
  const grey = (m) =>
    sharp(Buffer.from(m), { raw: { width: w, height: h, channels: 1 } })
      .toColourspace('srgb')
      .png()
      .toBuffer();
  await sharp({ create: { width: 3 * w + 8, height: h, channels: 3, background: '#f0f' } })
    .composite([
      { input: rgb, left: 0, top: 0 },
      { input: await grey(without), left: w + 4, top: 0 },
      { input: await grey(withRule), left: 2 * w + 8, top: 0 },
    ])
    .png()
    .toFile(
      join(
        OUT,
        `${file
          .split('/')
          .pop()
          .replace(/\.\w+$/, '')}.png`,
      ),
    );
}
console.log(`${changedImages} of ${files.length} images changed`);

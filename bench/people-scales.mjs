#!/usr/bin/env node
/**
 * How steady BlazePose's landmarks are across a photo's pixel size: each people fixture enlarged
 * 2, 3 and 5 times (sharp, lanczos3), the person nearest the 1x nose, and the mean distance of
 * its nose, shoulders, elbows, wrists and hips (those seen at 1x, visibility >= 0.8) from where
 * they lie at 1x, in shoulder widths. Try-on's fit follows these landmarks, and users' photos
 * are 3000-4000 px where the fixtures are 500-650 (issue 35, round 24).
 *
 *   npx tsc -p tsconfig.json && node bench/people-scales.mjs [--fixtures DIR]
 *
 * Prints one row per fixture (drift at 2x, 3x, 5x, whether the 1x person was the one found
 * first, how many people were found) and writes bench/out/people-scales.json. A drift of whole
 * shoulder widths is another person: the 1x one was not found at that size (basketball1.png's man
 * seen from behind, whose detector score, 0.21-0.22, is at its 0.2 threshold).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { detectPeople } from '../dist/engine/people.js';

const here = dirname(fileURLToPath(import.meta.url));
const at = process.argv.indexOf('--fixtures');
const fixtures = at > 0 ? process.argv[at + 1] : join(here, '..', 'test', 'fixtures', 'images');
const FILES = ['grace_hopper.jpg', 'messi5.jpg', 'astronaut.png', 'basketball1.png', 'apollo11_crew.jpg', 'camera.png'];
const POINTS = [0, 11, 12, 13, 14, 15, 16, 23, 24];
const SCALES = [2, 3, 5];

const out = {};
for (const file of FILES) {
  const src = sharp(readFileSync(join(fixtures, file))).removeAlpha();
  const { width, height } = await src.metadata();
  const rows = [];
  let base = null;
  for (const s of [1, ...SCALES]) {
    const { data, info } = await sharp(readFileSync(join(fixtures, file)))
      .removeAlpha()
      .resize(width * s, height * s, { kernel: 'lanczos3' })
      .raw()
      .toBuffer({ resolveWithObject: true });
    const people = await detectPeople({ data, width: info.width, height: info.height, channels: 3 });
    if (!people.length) {
      rows.push({ s, found: false });
      continue;
    }
    const nose = (p) => ({ x: p.landmarks[0].x / s, y: p.landmarks[0].y / s });
    const far = (p) => (base ? Math.hypot(nose(p).x - base[0].x, nose(p).y - base[0].y) : 0);
    const person = base ? people.reduce((a, b) => (far(b) < far(a) ? b : a)) : people[0];
    const L = POINTS.map((i) => ({ x: person.landmarks[i].x / s, y: person.landmarks[i].y / s, v: person.landmarks[i].visibility }));
    if (!base) base = L;
    const sw = Math.hypot(base[1].x - base[2].x, base[1].y - base[2].y);
    const d = L.map((l, k) => [Math.hypot(l.x - base[k].x, l.y - base[k].y) / sw, base[k].v]).filter(([, v]) => v >= 0.8);
    rows.push({ s, first: person === people[0], people: people.length, drift: d.reduce((a, [x]) => a + x, 0) / Math.max(1, d.length) });
  }
  out[file] = rows;
  console.log(
    file.padEnd(18),
    rows
      .slice(1)
      .map((r) => (r.found === false ? `${r.s}x: none` : `${r.s}x: ${r.drift.toFixed(3)}${r.first ? '' : ' (not first)'} ${r.people}p`))
      .join('  '),
  );
}
mkdirSync(join(here, 'out'), { recursive: true });
writeFileSync(join(here, 'out', 'people-scales.json'), JSON.stringify(out, null, 1));

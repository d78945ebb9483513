#!/usr/bin/env node
/**
 * A contact sheet of the framing evaluation set (bench/remove-background-set.mjs): every case's
 * composite, tuning split then held-out, one row per category, to look at what the bench judges.
 *
 *   node bench/remove-background-set-sheet.mjs   -> bench/out/remove-background-set.png
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { FIXTURES } from './fixtures.mjs';
import { CATEGORIES, PER_CATEGORY, framingCase, framingList } from './remove-background-set.mjs';

const list = framingList();
const per = PER_CATEGORY.tune + PER_CATEGORY.heldout;
const tw = 160,
  th = 120;
const tiles = [];
for (const c of list) {
  const x = await framingCase(FIXTURES, c.category, c.k, { heldout: c.split === 'heldout' });
  const col = (c.split === 'heldout' ? PER_CATEGORY.tune : 0) + c.k;
  const row = CATEGORIES.indexOf(c.category);
  tiles.push({
    input: await sharp(x.rgb, { raw: { width: x.width, height: x.height, channels: 3 } })
      .resize(tw, th)
      .png()
      .toBuffer(),
    left: col * (tw + 2) + (c.split === 'heldout' ? 8 : 0),
    top: row * (th + 2),
  });
}
const out = join(import.meta.dirname, 'out');
mkdirSync(out, { recursive: true });
const file = join(out, 'remove-background-set.png');
await sharp({ create: { width: per * (tw + 2) + 8, height: CATEGORIES.length * (th + 2), channels: 3, background: '#000' } })
  .composite(tiles)
  .png()
  .toFile(file);
console.log(`${list.length} cases: ${file}`);

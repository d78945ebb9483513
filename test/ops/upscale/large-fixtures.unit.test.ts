// The upscale bench's `large` protocol (bench/upscale.mjs) stands for the workload, a
// 1000 -> 4000 px job: its photos must stay photos of that size class (>= 1600 px on the long
// side, so the 2x2-box truth is ~1000 px), whole and decodable, within the fixture budget, and
// each with its source and licence in test/fixtures/README.md.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { FIXTURES } from '../../helpers.js';

const dir = join(FIXTURES, 'large');
const photos = readdirSync(dir).filter((f) => /\.(jpe?g|png)$/i.test(f));

describe('large upscale fixtures', () => {
  it('has 4-8 photos within the byte budget (each <= 1.5 MB, <= 8 MB in all)', () => {
    expect(photos.length).toBeGreaterThanOrEqual(4);
    expect(photos.length).toBeLessThanOrEqual(8);
    const sizes = photos.map((f) => statSync(join(dir, f)).size);
    for (const s of sizes) expect(s).toBeLessThanOrEqual(1.5 * 1024 * 1024);
    expect(sizes.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(8 * 1024 * 1024);
  });

  it.each(photos)('%s is at least 1600 px on its long side and decodes whole', async (f) => {
    const meta = await sharp(join(dir, f)).metadata();
    expect(Math.max(meta.width!, meta.height!)).toBeGreaterThanOrEqual(1600);
    // Decoding fails on a truncated file (sharp's default failOn 'warning').
    const { info } = await sharp(join(dir, f), { failOn: 'truncated' }).raw().toBuffer({ resolveWithObject: true });
    expect(info.width).toBe(meta.width);
  });

  it('names every photo, with its licence, in the fixtures README', () => {
    const readme = readFileSync(join(FIXTURES, 'README.md'), 'utf8');
    const rows = readme.split('\n').filter((l) => l.startsWith('| large/ |'));
    for (const f of photos) {
      // The name on its own, not inside a source path such as domestic_dog.jpg.
      const named = new RegExp(`(?<![\\w./-])${f.replace(/\./g, '\\.')}`);
      const row = rows.find((r) => named.test(r));
      expect(row, `${f} has no row in test/fixtures/README.md`).toBeDefined();
      expect(row).toMatch(/CC0|CDLA-Permissive-1\.0|public domain|MIT|BSD|Apache/);
    }
  });
});

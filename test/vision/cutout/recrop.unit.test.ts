import { describe, expect, it } from 'vitest';
import { contrastCandidates, contrastSaliency, lab } from '../../../src/vision/cutout/contrast.js';
import { acceptCrop, cropsAround, cropPixels, DEFAULT_RECROP, unsure } from '../../../src/vision/cutout/recrop.js';

const W = 320,
  H = 240;

/** A washed-out, busy-ish backdrop (pale stripes running out of the frame) with two small blue gems. */
function gems() {
  const data = new Uint8Array(W * H * 3);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const i = (y * W + x) * 3;
      const stripe = ((x >> 4) & 1) === 1;
      data.set(stripe ? [225, 220, 170] : [200, 215, 190], i);
      const gem = (x - 150) ** 2 + (y - 120) ** 2 < 100 || (x - 185) ** 2 + (y - 120) ** 2 < 100;
      if (gem) data.set([30, 90, 230], i);
    }
  }
  return data;
}

describe('remove-background: colour contrast and the second look (recrop.ts)', () => {
  it('converts sRGB to CIELAB (white, black, pure red)', () => {
    const [L, a, b] = lab(255, 255, 255);
    expect(L).toBeCloseTo(100, 0);
    expect(Math.abs(a) + Math.abs(b)).toBeLessThan(0.5);
    expect(lab(0, 0, 0)[0]).toBeCloseTo(0, 3);
    const red = lab(255, 0, 0);
    expect(red[0]).toBeCloseTo(53.2, 0);
    expect(red[1]).toBeCloseTo(80.1, 0);
  });

  it('finds the rare, distant colour and skips regions cut by the frame', () => {
    const data = gems();
    // A vivid red band along the left edge: contrasting too, but it runs out of the frame.
    for (let y = 0; y < H; y++) for (let x = 0; x < 12; x++) data.set([230, 20, 20], (y * W + x) * 3);
    const map = contrastSaliency({ data, channels: 3 }, W, H);
    const c = contrastCandidates(map, W, H)[0];
    expect(c).not.toBeNull();
    // A gem, not the band.
    expect(c!.x).toBeGreaterThan(120);
    expect(c!.x + c!.width).toBeLessThan(210);
    expect(c!.y).toBeGreaterThan(95);
    expect(c!.y + c!.height).toBeLessThan(145);
  });

  it('calls a faint mask unsure and a confident one sure', () => {
    const faint = new Uint8Array(W * H);
    for (let i = 0; i < faint.length; i += 3) faint[i] = 90;
    expect(unsure(faint, W, H)).toBe(true);
    const body = new Uint8Array(W * H);
    for (let y = 80; y < 160; y++) for (let x = 100; x < 220; x++) body[y * W + x] = 255;
    expect(unsure(body, W, H)).toBe(false);
    expect(unsure(new Uint8Array(W * H), W, H)).toBe(true);
  });

  it('crops around the candidate, and accepts only a whole confident object holding it', () => {
    const data = gems();
    const crops = cropsAround({ data, channels: 3 }, W, H);
    // One crop per gem: both have the same contrast.
    expect(crops.length).toBe(2);
    const centres = crops.map((c) => c.candidate.x + c.candidate.width / 2).sort((a, b) => a - b);
    expect(Math.abs(centres[0]! - 150)).toBeLessThan(8);
    expect(Math.abs(centres[1]! - 185)).toBeLessThan(8);
    const { crop, candidate } = crops[0]!;
    expect(crop.width).toBeGreaterThanOrEqual(DEFAULT_RECROP.minSide * H - 1);
    expect(crop.x).toBeLessThanOrEqual(candidate.x);
    expect(crop.x + crop.width).toBeGreaterThanOrEqual(candidate.x + candidate.width);
    const pixels = cropPixels(data, 3, W, crop);
    expect(pixels.length).toBe(crop.width * crop.height * 3);
    // First row of the crop is the image's row crop.y from crop.x.
    expect([...pixels.subarray(0, 3)]).toEqual([...data.subarray((crop.y * W + crop.x) * 3, (crop.y * W + crop.x) * 3 + 3)]);
    // The gems, found in the crop: accepted and placed back where they are in the image.
    const cm = new Uint8Array(crop.width * crop.height);
    for (let y = 0; y < crop.height; y++)
      for (let x = 0; x < crop.width; x++) {
        const gx = crop.x + x,
          gy = crop.y + y;
        if ((gx - 150) ** 2 + (gy - 120) ** 2 < 100 || (gx - 185) ** 2 + (gy - 120) ** 2 < 100) cm[y * crop.width + x] = 255;
      }
    const full = new Uint8Array(W * H);
    expect(acceptCrop(cm, crop, candidate, full, W, H)).toBe(true);
    expect(full[120 * W + 150]).toBe(255);
    expect(full[120 * W + 185]).toBe(255);
    expect(full[10 * W + 10]).toBe(0);
    // A mask running off the crop's border (a piece of something larger) is rejected...
    const off = Uint8Array.from(cm);
    for (let y = 0; y < crop.height; y++) for (let x = 0; x < 20; x++) off[y * crop.width + x] = 255;
    expect(acceptCrop(off, crop, candidate, new Uint8Array(W * H), W, H)).toBe(false);
    // ...and so is one that misses the candidate.
    const elsewhere = new Uint8Array(crop.width * crop.height);
    for (let y = 5; y < 25; y++) for (let x = 5; x < 25; x++) elsewhere[y * crop.width + x] = 255;
    expect(acceptCrop(elsewhere, crop, candidate, new Uint8Array(W * H), W, H)).toBe(false);
  });
});

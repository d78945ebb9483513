// The colour fill under transparent pixels, on hand-made images where the answer is known.
import { describe, expect, it } from 'vitest';
import { BLEED_RADIUS, bleedHiddenColour, splitAlpha } from '../../../src/ops/upscale/alpha.js';

describe('bleedHiddenColour', () => {
  it('continues edge colours outwards, leaves visible pixels alone, and fills far pixels with the mean visible colour', () => {
    const width = BLEED_RADIUS * 2 + 8;
    const height = 3;
    const rgb = new Uint8Array(width * height * 3).fill(7); // junk under alpha 0
    const alpha = new Uint8Array(width * height);
    // Column 0 red and opaque, column 1 blue at half alpha; everything else hidden.
    for (let y = 0; y < height; y++) {
      rgb.set([255, 0, 0], y * width * 3);
      alpha[y * width] = 255;
      rgb.set([0, 0, 255], (y * width + 1) * 3);
      alpha[y * width + 1] = 128;
    }
    const visibleBefore = [0, 1].map((x) => Array.from(rgb.subarray(x * 3, x * 3 + 3)));
    bleedHiddenColour(rgb, alpha, width, height);
    const at = (x: number, y = 1) => Array.from(rgb.subarray((y * width + x) * 3, (y * width + x) * 3 + 3));
    expect([at(0), at(1)]).toEqual(visibleBefore);
    // Ring 1 (x = 2) only touches the blue column.
    expect(at(2)).toEqual([0, 0, 255]);
    // Within the radius the colour carries on; beyond it the alpha-weighted mean of red and blue.
    expect(at(1 + BLEED_RADIUS)).toEqual([0, 0, 255]);
    const mean = [Math.round((255 * 255) / (255 + 128)), 0, Math.round((255 * 128) / (255 + 128))];
    expect(at(2 + BLEED_RADIUS)).toEqual(mean);
    expect(at(width - 1, 0)).toEqual(mean);
    for (let i = 0; i < width * height; i++) if (alpha[i] === 0) expect(rgb[i * 3 + 1]).not.toBe(7);
  });

  it('does nothing without hidden pixels, and survives an image with nothing visible', () => {
    const rgb = Uint8Array.from([1, 2, 3, 4, 5, 6]);
    bleedHiddenColour(rgb, Uint8Array.from([255, 1]), 2, 1);
    expect(Array.from(rgb)).toEqual([1, 2, 3, 4, 5, 6]);
    bleedHiddenColour(rgb, Uint8Array.from([0, 0]), 2, 1);
    expect(rgb.length).toBe(6);
  });

  it('splitAlpha separates interleaved RGBA', () => {
    const { rgb, alpha } = splitAlpha({ data: Buffer.from([1, 2, 3, 4, 5, 6, 7, 8]), width: 2, height: 1, channels: 4 });
    expect(Array.from(rgb)).toEqual([1, 2, 3, 5, 6, 7]);
    expect(Array.from(alpha!)).toEqual([4, 8]);
  });
});

// Issue 35, thirteenth round: a coat's sleeves hang against its body, so worn it covers the arms
// beside the torso too. On grace_hopper.jpg (turned, a bust) the coat's far side ends 60 px
// (0.17 shoulder widths) inside her dark uniform's arm: wider than the fill band's pocket, so the
// band faded out over it and the uniform showed through as a dark smudge down the coat's left
// edge. A top with hanging sleeves takes a wider pocket (pipeline.ts FILL_POCKET_HANGING).
import { describe, expect, it } from 'vitest';
import { fileInput, fixture } from '../../helpers.js';
import { renderPair, rgb } from './render.js';

const SLOW = 300_000;

describe('a coat with hanging sleeves, worn', () => {
  it('covers the dark uniform beside its far side on grace_hopper.jpg', { timeout: SLOW }, async () => {
    const ref = await rgb(fixture('images/grace_hopper.jpg'));
    const res = await renderPair(fileInput(fixture('images/grace_hopper.jpg')), fileInput(fixture('cutouts/coat.png')), 'scene');
    const out = await rgb(res.data as Buffer);
    const { width: W, height: H } = ref;
    const lum = (d: Buffer, i: number) => 0.299 * d[i * 3]! + 0.587 * d[i * 3 + 1]! + 0.114 * d[i * 3 + 2]!;
    // The uniform's dark pixels in the lower left of the picture (below the flag), and those of
    // them still dark in the render (the coat is far lighter).
    let uniform = 0,
      dark = 0;
    for (let y = Math.round(0.72 * H); y < H; y++) {
      for (let x = 0; x < Math.round(0.3 * W); x++) {
        const i = y * W + x;
        if (lum(ref.data, i) >= 45) continue;
        uniform++;
        if (lum(out.data, i) < 110) dark++;
      }
    }
    // Measured: 20478 uniform pixels; 1014 still dark before, 87 after.
    expect(uniform).toBeGreaterThan(10_000);
    expect(dark / uniform).toBeLessThan(0.01);
  });
});

import { describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { bufferInput, fixture, runOp } from '../../helpers.js';
import { scoreAlpha } from './composites.js';

describe('remove-background cleanup on real composites', () => {
  // Two products of similar size side by side: the cleanup must keep both (default model).
  it('two cut-outs side by side are both kept (IoU >= 0.9 against their union)', async () => {
    const w = 360,
      h = 200,
      side = 150;
    const bg = await sharp(fixture('textures/gravel.png')).resize(w, h, { fit: 'cover' }).removeAlpha().raw().toBuffer();
    const alpha = new Uint8Array(w * h);
    for (const [name, left] of [
      ['handbag', 15],
      ['basketball', 195],
    ] as const) {
      const fg = await sharp(fixture(`cutouts/${name}.png`))
        .resize(side, side)
        .ensureAlpha()
        .raw()
        .toBuffer();
      const top = 25;
      for (let y = 0; y < side; y++)
        for (let x = 0; x < side; x++) {
          const s = (y * side + x) * 4,
            a = fg[s + 3]!,
            i = (top + y) * w + left + x;
          alpha[i] = a;
          for (let c = 0; c < 3; c++) bg[i * 3 + c] = Math.round((fg[s + c]! * a + bg[i * 3 + c]! * (255 - a)) / 255);
        }
    }
    const file = await sharp(bg, { raw: { width: w, height: h, channels: 3 } })
      .png()
      .toBuffer();
    const { result } = await runOp('remove-background', { image: bufferInput('pair.png', file) }, { mask_only: true });
    const { data } = await sharp(result.data!).extractChannel(0).raw().toBuffer({ resolveWithObject: true });
    const pred = new Uint8Array(data);
    expect(scoreAlpha(pred, alpha, w, h).iou).toBeGreaterThanOrEqual(0.9);
    // Each product on its own is found, not just the pair on average.
    for (const [x0, x1] of [
      [15, 165],
      [195, 345],
    ]) {
      let inter = 0,
        truth = 0;
      for (let y = 0; y < h; y++)
        for (let x = x0; x < x1; x++) {
          const i = y * w + x;
          if (alpha[i]! >= 128) {
            truth++;
            if (pred[i]! >= 128) inter++;
          }
        }
      expect(inter / truth).toBeGreaterThan(0.9);
    }
  }, 60_000);
});

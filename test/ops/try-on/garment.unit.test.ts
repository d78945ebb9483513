import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { decodeImage } from '../../../src/media/image.js';
import { classify, prepareGarment } from '../../../src/ops/try-on/garment.js';
import { tryOn } from '../../../src/ops/try-on/index.js';
import { plane } from '../../../src/ops/try-on/raster.js';
import { bufferInput, fixture } from '../../helpers.js';

async function decoded(buf: Buffer, name = 'g.png') {
  return decodeImage(bufferInput(name, buf), tryOn.limits, tryOn.name);
}

describe('garment analysis', () => {
  it('classifies the fixtures and a synthetic pair of trousers by shape', async () => {
    const shirt = await prepareGarment(await decoded(await sharp(fixture('cutouts/tshirt.png')).toBuffer()), { preprocess: true });
    const dress = await prepareGarment(await decoded(await sharp(fixture('cutouts/dress.png')).toBuffer()), { preprocess: true });
    expect(shirt.kind).toBe('top');
    expect(dress.kind).toBe('full');
    expect(shirt.landmarks.sleeveL && shirt.landmarks.sleeveR).toBeTruthy();
    // Trousers: a full-width waistband over two legs.
    const w = 120,
      h = 200,
      m = new Uint8Array(w * h);
    for (let y = 10; y < 190; y++) {
      for (let x = 20; x < 100; x++) {
        const leg = y < 80 || x < 55 || x >= 65;
        if (leg) m[y * w + x] = 1;
      }
    }
    expect(classify(plane(w, h, m))).toBe('bottom');
  });

  it('finds a coat laid flat with its sleeves hanging against its body: both sleeves, down to the cuffs, beside the body', async () => {
    const coat = await prepareGarment(await decoded(await sharp(fixture('cutouts/coat.png')).toBuffer()), { preprocess: true });
    expect(coat.kind).toBe('top');
    const { sleeveL, sleeveR, cx, hemY } = coat.landmarks;
    expect(sleeveL?.inner).toBeDefined();
    expect(sleeveR?.inner).toBeDefined();
    // The sleeves hang: their cuffs are far below the shoulders, outside the body's edges.
    for (const s of [sleeveL!, sleeveR!]) expect(s.cuff.y).toBeGreaterThan(0.6 * hemY);
    expect(sleeveL!.tip.x).toBeLessThan(sleeveL!.inner!);
    expect(sleeveR!.tip.x).toBeGreaterThan(sleeveR!.inner!);
    expect(sleeveL!.inner!).toBeLessThan(cx);
    expect(sleeveR!.inner!).toBeGreaterThan(cx);
    // Sleeve pixels lie on both sides and none in the body's middle column.
    const { width, data } = coat.sleeves;
    let left = 0,
      right = 0,
      middle = 0;
    for (let i = 0; i < data.length; i++) {
      if (!data[i]) continue;
      const x = i % width;
      if (x < sleeveL!.inner!) left++;
      else if (x > sleeveR!.inner!) right++;
      if (Math.abs(x - cx) < 10) middle++;
    }
    expect(left).toBeGreaterThan(200);
    expect(right).toBeGreaterThan(200);
    expect(middle).toBe(0);
  });

  it('uses a cut-out garment as is: no extraction, no surcharge', async () => {
    const g = await prepareGarment(await decoded(await sharp(fixture('cutouts/tshirt.png')).toBuffer()), { preprocess: true });
    expect(g.extracted).toBe(false);
    expect(g.reasons).toEqual([]);
  });

  /** The T-shirt and a sneaker side by side on a transparent canvas. */
  const shirtAndSneaker = () =>
    sharp({ create: { width: 520, height: 256, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } })
      .composite([
        { input: fixture('cutouts/tshirt.png'), left: 0, top: 0 },
        { input: fixture('cutouts/sneaker.png'), left: 264, top: 0 },
      ])
      .png()
      .toBuffer();

  it('detects other objects beside the garment and keeps the largest region', async () => {
    const canvas = await shirtAndSneaker();
    const g = await prepareGarment(await decoded(canvas), { preprocess: true });
    expect(g.extracted).toBe(true);
    expect(g.reasons.join(' ')).toMatch(/other object/);
    // The kept region is the T-shirt (about 230 px wide), not both objects.
    expect(g.rgba.width).toBeLessThan(256);
    expect(g.kind).toBe('top');
  });

  it('without preprocessing keeps everything and charges nothing extra', async () => {
    const canvas = await shirtAndSneaker();
    const g = await prepareGarment(await decoded(canvas), { preprocess: false });
    expect(g.extracted).toBe(false);
  });
});

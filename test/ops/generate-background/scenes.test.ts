import { describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { fixture, runOp } from '../../helpers.js';
import { SCENES } from '../../../src/ops/generate-background/index.js';
import { gradientEnergy, histogram, hue, l1, meanRgb, rgbOf } from './stats.js';

// A small subject low in the frame leaves most of the scene visible for statistics.
const small = { scale: 0.3, x_center: 0.5, y_center: 0.8 };

describe('generate-background scenes', () => {
  it('renders every preset at 1024x1024 and the six are measurably different', async () => {
    const stats: { scene: string; hist: Float64Array; wallTex: number; floorTex: number; mean: number[] }[] = [];
    for (const scene of SCENES) {
      const { result } = await runOp('generate-background', { image: fixture('cutouts/apple.png') }, { scene, seed: 11, image_transform: small });
      expect(result.ext).toBe('jpg');
      expect(result.contentType).toBe('image/jpeg');
      expect(result.credits).toBe(2);
      const meta = await sharp(result.data!).metadata();
      expect([meta.format, meta.width, meta.height]).toEqual(['jpeg', 1024, 1024]);
      const img = await rgbOf(result.data!);
      stats.push({
        scene,
        hist: histogram(img, 0, 1024),
        wallTex: gradientEnergy(img, 0, 300),
        floorTex: gradientEnergy(img, 900, 1024),
        mean: meanRgb(img, 0, 1024),
      });
    }
    for (let a = 0; a < stats.length; a++) {
      for (let b = a + 1; b < stats.length; b++) {
        const A = stats[a]!,
          B = stats[b]!;
        const histDist = l1(A.hist, B.hist);
        const texDiff = Math.max(Math.abs(Math.log(A.wallTex / B.wallTex)), Math.abs(Math.log(A.floorTex / B.floorTex)));
        // Different colour distribution, or clearly different texture (ratio > 1.5x).
        expect(histDist > 0.5 || texDiff > Math.log(1.5), `${A.scene} vs ${B.scene}: hist ${histDist.toFixed(2)} tex ${texDiff.toFixed(2)}`).toBe(true);
      }
    }
    // Materials read as themselves: brick is the reddest backdrop, industrial the darkest/coolest.
    const by = Object.fromEntries(stats.map((s) => [s.scene, s]));
    const redness = (s: (typeof stats)[number]) => s.mean[0]! - s.mean[2]!;
    for (const s of stats) if (s.scene !== 'brick' && s.scene !== 'wood') expect(redness(by.brick!)).toBeGreaterThan(redness(s));
    expect(by.industrial!.mean[2]! - by.industrial!.mean[0]!).toBeGreaterThan(0);
  }, 90_000);

  it('moves hue and brightness the way the prompt words say', async () => {
    const run = async (prompt: string) =>
      rgbOf((await runOp('generate-background', { image: fixture('cutouts/crown.png') }, { prompt, seed: 5, image_transform: small })).result.data!);
    const blue = meanRgb(await run('plaster wall, blue, linen table'), 0, 400);
    const red = meanRgb(await run('plaster wall, red, linen table'), 0, 400);
    expect(blue[2]).toBeGreaterThan(blue[0] + 15);
    expect(red[0]).toBeGreaterThan(red[2] + 15);
    expect(Math.abs(hue(blue) - 220)).toBeLessThan(40);
    expect(hue(red) < 30 || hue(red) > 330).toBe(true);

    const dark = meanRgb(await run('dark moody concrete'), 0, 1024);
    const bright = meanRgb(await run('bright airy concrete'), 0, 1024);
    const lum = (c: number[]) => 0.299 * c[0]! + 0.587 * c[1]! + 0.114 * c[2]!;
    expect(lum(bright)).toBeGreaterThan(lum(dark) + 40);

    const warm = meanRgb(await run('warm marble'), 0, 1024);
    const cool = meanRgb(await run('cool marble'), 0, 1024);
    expect(warm[0] - warm[2]).toBeGreaterThan(cool[0] - cool[2] + 15);
  }, 90_000);
});

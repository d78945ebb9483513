import { describe, expect, it } from 'vitest';
import { blendSeams, SEAM_BLEND } from '../../../src/ops/outpaint/seam.js';
import { blendStraight, STRAIGHT_BLEND } from '../../../src/ops/outpaint/straight.js';
import type { Level } from '../../../src/ops/outpaint/pyramid.js';
import { mulberry32 } from '../../../src/media/random.js';
import { distinctMap } from '../../../src/ops/outpaint/distinct.js';
import { synthesize } from '../../../src/ops/outpaint/synthesize.js';
import { sideWeights, trusted } from '../../../src/ops/outpaint/salient.js';
import { emptyField, renderBest, vote } from '../../../src/ops/outpaint/patchmatch.js';
import { detailMaps } from '../../../src/ops/outpaint/detail.js';
import { gradientRender } from '../../../src/ops/outpaint/gradient.js';

// The post-processing steps of outpaint on small synthetic canvases (no media, no models).
describe('outpaint synthesis parts (synthetic canvases)', () => {
  it('seam blending pulls a systematic offset to the original but leaves texture-sized steps alone', () => {
    // 40x20 canvas, original = left 20 columns; band 20 columns on the right.
    const w = 40,
      h = 20;
    const mk = (orig: (x: number, y: number) => number, band: (x: number, y: number) => number): Level => {
      const img = new Float32Array(w * h * 3);
      for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) img.fill(x < 20 ? orig(x, y) : band(x, y), (y * w + x) * 3, (y * w + x) * 3 + 3);
      return { w, h, img, kx0: 0, ky0: 0, kx1: 20, ky1: h };
    };
    // A flat original at 200 and a band that came out at 50: the first band column meets 200,
    // the correction fades to nothing by the blend width.
    const flat = mk(
      () => 200,
      () => 50,
    );
    blendSeams(flat, SEAM_BLEND);
    expect(flat.img[(10 * w + 20) * 3]).toBeGreaterThan(190);
    expect(flat.img[(10 * w + 39) * 3]).toBeLessThan(flat.img[(10 * w + 25) * 3]!);
    expect(flat.img[(10 * w + 39) * 3]).toBeLessThan(70);
    // Noise on both sides with the same mean: steps are within the original's own, nothing moves.
    const rng = mulberry32(3);
    const noise = () => 100 + ((rng() % 61) - 30);
    const tex = mk(noise, noise);
    const before = Float32Array.from(tex.img);
    blendSeams(tex, SEAM_BLEND);
    let moved = 0;
    for (let i = 0; i < before.length; i++) moved += Math.abs(tex.img[i]! - before[i]!);
    expect(moved / (w * h * 3)).toBeLessThan(1);
    for (let y = 0; y < h; y++) for (let x = 0; x < 20; x++) expect(tex.img[(y * w + x) * 3]).toBe(before[(y * w + x) * 3]);
  });

  it('seam blending fades out past the border ends: no line drawn across a corner', () => {
    // 60x60 canvas, original = [20,40) both ways, band all round. Original flat 200, band 50.
    const w = 60,
      h = 60;
    const img = new Float32Array(w * h * 3);
    for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) img.fill(x >= 20 && x < 40 && y >= 20 && y < 40 ? 200 : 50, (y * w + x) * 3, (y * w + x) * 3 + 3);
    const L: Level = { w, h, img, kx0: 20, ky0: 20, kx1: 40, ky1: 40 };
    blendSeams(L, SEAM_BLEND);
    // Next to the border the band is pulled up; in the corner, the row just above the top border
    // falls off with the distance past the border's left end instead of staying at full strength.
    expect(img[(19 * w + 30) * 3]).toBeGreaterThan(150);
    const atEnd = img[(19 * w + 19) * 3]! - 50;
    const farOut = img[(19 * w + 2) * 3]! - 50;
    expect(farOut).toBeLessThan(0.25 * atEnd);
  });

  it('straight blend carries structure that runs across the border, leaves texture and the original alone', () => {
    // 40x48 canvas, original = top 32 rows; band 16 rows at the bottom, filled with noise.
    const w = 40,
      h = 48,
      kh = 32;
    const rng = mulberry32(5);
    const mk = (orig: (x: number, y: number) => number): Level => {
      const img = new Float32Array(w * h * 3);
      for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) img.fill(y < kh ? orig(x, y) : 60 + (rng() % 120), (y * w + x) * 3, (y * w + x) * 3 + 3);
      return { w, h, img, kx0: 0, ky0: 0, kx1: w, ky1: kh };
    };
    const err = (L: Level, y0: number) => {
      let e = 0,
        n = 0;
      for (let y = y0; y < h; y++) for (let x = 0; x < w; x++, n++) e += Math.abs(L.img[(y * w + x) * 3]! - L.img[((kh - 1) * w + x) * 3]!);
      return e / n;
    };
    // Vertical stripes: the band becomes (nearly) the stripes carried straight on, except right
    // at the seam, where the synthesis is kept in part.
    const stripes = mk((x) => (x % 8 < 4 ? 40 : 220));
    const before = err(stripes, kh + 8);
    const orig = stripes.img.slice(0, kh * w * 3);
    blendStraight(stripes, STRAIGHT_BLEND, 1);
    expect(err(stripes, kh + 8)).toBeLessThan(0.3 * before);
    expect(stripes.img.slice(0, kh * w * 3)).toEqual(orig);
    // Noise in the original: nothing is predictable straight across, the band hardly moves.
    const tex = mk(() => 60 + (rng() % 120));
    const copy = Float32Array.from(tex.img);
    blendStraight(tex, STRAIGHT_BLEND, 1);
    let moved = 0;
    for (let i = kh * w * 3; i < copy.length; i++) moved += Math.abs(tex.img[i]! - copy[i]!);
    expect(moved / ((h - kh) * w * 3)).toBeLessThan(3);
    // Amount 0 (creativity 1): identity.
    const again = mk((x) => (x % 8 < 4 ? 40 : 220));
    const same = Float32Array.from(again.img);
    blendStraight(again, STRAIGHT_BLEND, 0);
    expect(again.img).toEqual(same);
  });

  it('distinctness: a one-off object scores high, the texture it sits in (and the band) zero', () => {
    // 64x64 canvas, original = top 48 rows of a periodic texture (tile 8 px) with a single
    // 10x10 red square; band = bottom 16 rows.
    const w = 64,
      h = 64,
      kh = 48;
    const img = new Float32Array(w * h * 3);
    const rng = mulberry32(9);
    const tile = Array.from({ length: 64 }, () => 40 + (rng() % 160));
    for (let y = 0; y < kh; y++)
      for (let x = 0; x < w; x++) {
        const i = (y * w + x) * 3;
        const red = x >= 30 && x < 40 && y >= 20 && y < 30;
        img[i] = red ? 230 : tile[(y % 8) * 8 + (x % 8)]!;
        img[i + 1] = red ? 20 : img[i]!;
        img[i + 2] = red ? 20 : img[i]!;
      }
    const L: Level = { w, h, img, kx0: 0, ky0: 0, kx1: w, ky1: kh };
    const D = distinctMap(L, 3, mulberry32(1), 6);
    // The texture repeats exactly: its patches have exact duplicates one period away.
    expect(D[10 * w + 10]).toBe(0);
    expect(D[40 * w + 55]).toBe(0);
    // The square's centre has no duplicate anywhere: large (squared 8-bit units per channel).
    expect(D[25 * w + 35]).toBeGreaterThan(1000);
    for (let i = kh * w; i < w * h; i++) expect(D[i]).toBe(0);
  });

  it('distinctness counts the second occurrence: a pair of objects (two eyes) is distinct, a texture is not', () => {
    // The texture above with two identical 10x10 red squares. Each square's nearest other patch is
    // the other square (distance 0), so by the nearest alone the pair looked like texture and was
    // copied freely (the baboon's eyes on both sides of its left + right 25% fill); the second
    // nearest other occurrence is texture, far away.
    const w = 64,
      h = 64,
      kh = 48;
    const img = new Float32Array(w * h * 3);
    const rng = mulberry32(9);
    const tile = Array.from({ length: 64 }, () => 40 + (rng() % 160));
    for (let y = 0; y < kh; y++)
      for (let x = 0; x < w; x++) {
        const i = (y * w + x) * 3;
        const red = ((x >= 12 && x < 22) || (x >= 40 && x < 50)) && y >= 20 && y < 30;
        img[i] = red ? 230 : tile[(y % 8) * 8 + (x % 8)]!;
        img[i + 1] = red ? 20 : img[i]!;
        img[i + 2] = red ? 20 : img[i]!;
      }
    const L: Level = { w, h, img, kx0: 0, ky0: 0, kx1: w, ky1: kh };
    const first = distinctMap(L, 3, mulberry32(1), 6, 1);
    const second = distinctMap(L, 3, mulberry32(1), 6, 2);
    expect(first[25 * w + 17]).toBe(0);
    expect(second[25 * w + 17]).toBeGreaterThan(1000);
    expect(second[25 * w + 45]).toBeGreaterThan(1000);
    // The texture still has exact repeats at the second occurrence too.
    expect(second[10 * w + 10]).toBe(0);
    expect(second[40 * w + 30]).toBe(0);
  });

  it('an object cut by the border is carried on next to the seam but not copied again deep in the band', async () => {
    // 160x160 periodic texture (tile 16 px) with one red disc cut by the bottom border; band =
    // 80 rows below. Seeds 1-3 measured 161-324 red pixels in the outer 40 rows without the
    // distinctness cost (a second disc), 0-2 with it; ~1500 in the inner 40 rows either way.
    const W = 160,
      H = 160;
    const rng = mulberry32(9);
    const tile = Array.from({ length: 256 }, () => 60 + (rng() % 120));
    const rgb = new Uint8Array(W * H * 3);
    for (let y = 0; y < H; y++)
      for (let x = 0; x < W; x++) {
        const red = (x - 80) ** 2 + (y - 150) ** 2 < 20 ** 2;
        const v = tile[(y % 16) * 16 + (x % 16)]!;
        rgb.set(red ? [220, 30, 30] : [v, v, v], (y * W + x) * 3);
      }
    const redIn = (data: Uint8Array, y0: number, y1: number) => {
      let n = 0;
      for (let y = y0; y < y1; y++) for (let x = 0; x < W; x++) if (data[(y * W + x) * 3]! > 150 && data[(y * W + x) * 3 + 1]! < 90) n++;
      return n;
    };
    const m = { left: 0, top: 0, right: 0, bottom: 80 };
    // With the coarsest scale's vote falloff of the finer scales (2 per pixel, round 8), as when
    // these figures were measured: since round 9 the gentler coarsest vote (1.3) alone no longer
    // drags the disc out (0 red pixels in the outer rows without the distinctness cost either), so
    // the distinctness cost is tested where it is what makes the difference.
    const off = (await synthesize(rgb, W, H, m, { creativity: 0, seed: 1, distinct: 0, salient: 0, coarseFalloff: 2 })).data;
    const on = (await synthesize(rgb, W, H, m, { creativity: 0, seed: 1, salient: 0, coarseFalloff: 2 })).data;
    expect(redIn(off, H + 40, H + 80)).toBeGreaterThan(100);
    expect(redIn(on, H + 40, H + 80)).toBeLessThan(20);
    expect(redIn(on, H, H + 40)).toBeGreaterThan(500);
    // The default: no second disc, the cut one carried on next to the seam.
    const now = (await synthesize(rgb, W, H, m, { creativity: 0, seed: 1, salient: 0 })).data;
    expect(redIn(now, H + 40, H + 80)).toBeLessThan(20);
    expect(redIn(now, H, H + 40)).toBeGreaterThan(500);
  });

  // A 20x20 original above a 200-row band, every band patch pointing at a random source.
  const deepBand = () => {
    const w = 20,
      h = 220;
    const L: Level = { w, h, img: new Float32Array(w * h * 3).fill(-1), kx0: 0, ky0: 0, kx1: w, ky1: 20 };
    const rng = mulberry32(3);
    for (let i = 0; i < w * 20 * 3; i++) L.img[i] = 10 + (rng() % 240);
    const F = emptyField(L, 3);
    for (const t of F.targets) {
      F.sx[t] = 3 + (rng() % 14);
      F.sy[t] = 3 + (rng() % 14);
      F.dist[t] = rng() % 5000;
    }
    return { L, F };
  };

  it('voting reaches every band pixel, however deep (the 2^-depth weight once underflowed past ~130 px)', () => {
    const { L, F } = deepBand();
    vote(L, F, 3);
    for (let i = L.w * 20 * 3; i < L.img.length; i++) expect(L.img[i]).toBeGreaterThanOrEqual(10);
  });

  it('the final render copies original pixels (best patch per pixel), the vote averages them', () => {
    const a = deepBand();
    const b = deepBand();
    const originals = new Set<string>();
    for (let i = 0; i < a.L.w * 20; i++) originals.add(Array.from(a.L.img.subarray(i * 3, i * 3 + 3)).join());
    renderBest(a.L, a.F, 3);
    vote(b.L, b.F, 3);
    let copied = 0;
    let averaged = 0;
    for (let i = a.L.w * 20; i < a.L.w * a.L.h; i++) {
      if (originals.has(Array.from(a.L.img.subarray(i * 3, i * 3 + 3)).join())) copied++;
      if (originals.has(Array.from(b.L.img.subarray(i * 3, i * 3 + 3)).join())) averaged++;
    }
    expect(copied).toBe(a.L.w * 200);
    expect(averaged).toBeLessThan(a.L.w * 20);
  });

  it('detail maps: sources are as busy as their patch, targets expect the detail of the original beside them', () => {
    // 40x40 canvas, original = top 24 rows: noise in columns 0-19, flat grey in 20-39; band below.
    const w = 40,
      h = 40;
    const rng = mulberry32(11);
    const img = new Float32Array(w * h * 3);
    for (let y = 0; y < 24; y++) for (let x = 0; x < w; x++) img.fill(x < 20 ? 60 + (rng() % 120) : 128, (y * w + x) * 3, (y * w + x) * 3 + 3);
    const L: Level = { w, h, img, kx0: 0, ky0: 0, kx1: w, ky1: 24 };
    const { source, want } = detailMaps(L, 3);
    expect(source[10 * w + 8]).toBeGreaterThan(20);
    expect(source[10 * w + 32]).toBe(0);
    // The band is empty: no source there.
    expect(source[30 * w + 8]).toBe(0);
    // Next to the border, below the noise a target expects noise-like detail, below the flat half none.
    expect(want[25 * w + 6]).toBeGreaterThan(20);
    expect(want[25 * w + 34]).toBeLessThan(1);
    // The original itself has no expectation.
    expect(want[10 * w + 8]).toBe(0);
  });

  it('gradient-domain render: a moderate step between two copied blocks is spread out, an object edge kept, texture kept', () => {
    // Original = top 20 rows of a 60x40 canvas: a texture of vertical lines (period 30), dark in
    // rows 0-9 and brighter by `lift` in rows 10-19. The band (rows 20-39) is copied from the dark
    // rows into columns 0-29 and from the bright rows into columns 30-59, as a best-patch render
    // would: a hard step of `lift` at column 30 that the photo never had.
    const w = 60,
      h = 40;
    const rng = mulberry32(7);
    const tex = Array.from({ length: 30 }, () => 40 + (rng() % 40));
    const run = (lift: number) => {
      const orig = (x: number, y: number) => tex[x % 30]! + (y >= 10 ? lift : 0);
      const img = new Float32Array(w * h * 3);
      for (let y = 0; y < 20; y++) for (let x = 0; x < w; x++) img.fill(orig(x, y), (y * w + x) * 3, (y * w + x) * 3 + 3);
      const L: Level = { w, h, img, kx0: 0, ky0: 0, kx1: w, ky1: 20 };
      const from = new Int32Array(w * h).fill(-1);
      for (let y = 20; y < h; y++)
        for (let x = 0; x < w; x++) {
          const s = (((y - 20) % 10) + (x >= 30 ? 10 : 0)) * w + x;
          from[y * w + x] = s;
          img.copyWithin((y * w + x) * 3, s * 3, s * 3 + 3);
        }
      // The step across columns 29|30 beyond the texture's own difference there (deep rows).
      const step = () => {
        let s = 0;
        for (let y = 30; y < h; y++) s += Math.abs(img[(y * w + 30) * 3]! - img[(y * w + 29) * 3]! - (tex[0]! - tex[29]!));
        return s / (h - 30);
      };
      // The texture: mean absolute horizontal difference inside the blocks.
      const texture = () => {
        let s = 0,
          n = 0;
        for (let y = 20; y < h; y++)
          for (let x = 1; x < w; x++) {
            if (x === 30) continue;
            s += Math.abs(img[(y * w + x) * 3]! - img[(y * w + x - 1) * 3]!);
            n++;
          }
        return s / n;
      };
      const before = { step: step(), texture: texture() };
      gradientRender(L, from, 200);
      // The original is never touched.
      for (let y = 0; y < 20; y++) for (let x = 0; x < w; x++) expect(img[(y * w + x) * 3]).toBe(orig(x, y));
      return { before, step: step(), texture: texture() };
    };
    // A block of the same background copied 20 levels lighter: the step is dissolved.
    const soft = run(20);
    expect(soft.before.step).toBeGreaterThan(18);
    expect(soft.step).toBeLessThan(0.25 * soft.before.step);
    expect(soft.texture).toBeGreaterThan(0.9 * soft.before.texture);
    // A step of 100 is an object's edge: kept (all but the dissolved 24 levels).
    const hard = run(100);
    expect(hard.step).toBeGreaterThan(0.6 * hard.before.step);
  });
});

describe('outpaint salient-subject gate (synthetic masks, no model)', () => {
  const W = 64,
    H = 48;
  const maskOf = (f: (x: number, y: number) => number) => {
    const m = new Uint8Array(W * H);
    for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) m[y * W + x] = f(x, y);
    return m;
  };
  it('trusts a confident compact subject, not an empty, speckled or whole-frame mask', () => {
    // A disc of radius 14 in the middle: 20% of the frame, hard edges, off the border.
    expect(
      trusted(
        maskOf((x, y) => ((x - 32) ** 2 + (y - 24) ** 2 < 196 ? 255 : 0)),
        W,
        H,
      ),
    ).toBe(true);
    // The same disc cut by the bottom border (a subject cut by the frame is the case it is for).
    expect(
      trusted(
        maskOf((x, y) => ((x - 32) ** 2 + (y - 48) ** 2 < 400 ? 255 : 0)),
        W,
        H,
      ),
    ).toBe(true);
    // Nothing found (a texture): a few bright specks.
    expect(
      trusted(
        maskOf((x, y) => (x % 16 === 0 && y % 16 === 0 ? 255 : 0)),
        W,
        H,
      ),
    ).toBe(false);
    // A haze of uncertain values with a little confident core (gravel): ambiguous >> subject.
    expect(
      trusted(
        maskOf((x, y) => ((x - 32) ** 2 + (y - 24) ** 2 < 144 ? 255 : 100)),
        W,
        H,
      ),
    ).toBe(false);
    // Everything is "subject": nothing to draw the band from.
    expect(
      trusted(
        maskOf(() => 255),
        W,
        H,
      ),
    ).toBe(false);
    // A portrait cut on all sides (round 9): the body runs along the bottom and both sides (the
    // subject touches more than half the border), the head pokes through the top. Trusted, with
    // the cost on the top only; before, such a mask was dropped and the band above the head grew
    // a second head.
    const portrait = maskOf((x, y) => ((y >= 8 && (x < 12 || x >= 52)) || y >= 40 || Math.abs(x - 32) < 8 ? 255 : 0));
    expect(trusted(portrait, W, H)).toBe(true);
    expect(sideWeights(portrait, W, H)).toEqual([0, 1, 0, 0]);
    // A subject within half the border keeps the cost on every side, however much of one side it
    // covers (the disc cut by the bottom border above).
    expect(
      sideWeights(
        maskOf((x, y) => ((x - 32) ** 2 + (y - 48) ** 2 < 400 ? 255 : 0)),
        W,
        H,
      ),
    ).toEqual([1, 1, 1, 1]);
    // A frame along all four sides: no side is free of it, nothing to draw the band from.
    expect(
      trusted(
        maskOf((x, y) => (x < 6 || y < 6 || x >= W - 6 || y >= H - 6 ? 255 : 0)),
        W,
        H,
      ),
    ).toBe(false);
  });
});

import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { bufferInput, fixture, runOp } from '../../helpers.js';
import { baselineFill } from '../../../bench/lib/baselines.mjs';
import { seamFigure } from '../../../bench/lib/metrics.mjs';
import { blendSeams, SEAM_BLEND } from '../../../src/ops/outpaint/seam.js';
import { fadeDetail, fadeFor, seamTrust } from '../../../src/ops/outpaint/continuation.js';
import { blendStraight, STRAIGHT_BLEND } from '../../../src/ops/outpaint/straight.js';
import type { Level } from '../../../src/ops/outpaint/pyramid.js';
import { mulberry32 } from '../../../src/media/random.js';

// Small derived inputs keep every synthesis well under a second.
let photo: Buffer; // 160x160 PNG crop of a photo
let photoRgb: Buffer;
let gravelPng: Buffer; // 200x160 texture
let alphaPng: Buffer;

async function rawOf(png: Buffer) {
  return sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
}

beforeAll(async () => {
  photo = await sharp(fixture('images/chelsea.png')).extract({ left: 150, top: 60, width: 160, height: 160 }).png().toBuffer();
  photoRgb = (await rawOf(photo)).data;
  gravelPng = await sharp(fixture('textures/gravel.png')).extract({ left: 0, top: 0, width: 200, height: 160 }).toColourspace('srgb').png().toBuffer();
  alphaPng = await sharp(fixture('cutouts/apple.png')).resize(160, 160).png().toBuffer();
});

async function expectCode(p: Promise<unknown>, code: string) {
  await expect(p).rejects.toMatchObject({ code });
}

describe('outpaint', () => {
  it('outputs input size plus the margins, original pixels byte-identical in PNG', async () => {
    const { result, progress } = await runOp('outpaint', { image: bufferInput('cat.png', photo) }, { left: 16, top: 8, right: 40, bottom: 24, output_format: 'png', seed: 3 });
    expect(result.ext).toBe('png');
    expect(result.contentType).toBe('image/png');
    expect(result.credits).toBe(2);
    const out = await rawOf(result.data!);
    expect(out.info.width).toBe(160 + 16 + 40);
    expect(out.info.height).toBe(160 + 8 + 24);
    for (let y = 0; y < 160; y++) {
      const a = photoRgb.subarray(y * 160 * 3, (y + 1) * 160 * 3);
      const start = ((y + 8) * out.info.width + 16) * 3;
      expect(Buffer.compare(a, out.data.subarray(start, start + 160 * 3))).toBe(0);
    }
    // Progress: per scale and iteration, fractions never go back, ends at 1.
    expect(progress.some((e) => /^scale \d+\/\d+ iteration \d+\/\d+$/.test(e.stage))).toBe(true);
    const scales = new Set(progress.map((e) => e.stage.match(/^scale (\d+)/)?.[1]).filter(Boolean));
    expect(scales.size).toBeGreaterThan(1);
    for (let i = 1; i < progress.length; i++) expect(progress[i]!.fraction).toBeGreaterThanOrEqual(progress[i - 1]!.fraction);
    expect(progress.at(-1)!.fraction).toBe(1);
  });

  it('defaults to JPEG and keeps the original within JPEG round-off', async () => {
    const { result } = await runOp('outpaint', { image: bufferInput('cat.png', photo) }, { right: 48, seed: 1 });
    expect(result.ext).toBe('jpg');
    expect(result.contentType).toBe('image/jpeg');
    const meta = await sharp(result.data!).metadata();
    expect(meta.format).toBe('jpeg');
    const out = await rawOf(result.data!);
    expect([out.info.width, out.info.height]).toEqual([208, 160]);
    // Reference: the same pixels through the same JPEG encoder on their own.
    const ref = await rawOf(await sharp(photoRgb, { raw: { width: 160, height: 160, channels: 3 } }).jpeg({ quality: 92, chromaSubsampling: '4:4:4' }).toBuffer());
    let ours = 0;
    let theirs = 0;
    for (let y = 0; y < 160; y++) for (let x = 0; x < 160 * 3; x++) {
      ours += Math.abs(photoRgb[y * 480 + x]! - out.data[y * 208 * 3 + x]!);
      theirs += Math.abs(photoRgb[y * 480 + x]! - ref.data[y * 480 + x]!);
    }
    expect(ours / (160 * 480)).toBeLessThan(theirs / (160 * 480) + 0.5);
  });

  it('continues the texture across the border better than edge replicate and mirror (seam figure)', async () => {
    // Cut 40 px off a 200 px wide gravel texture and fill it back.
    const full = await rawOf(gravelPng);
    const input = await sharp(gravelPng).extract({ left: 0, top: 0, width: 160, height: 160 }).png().toBuffer();
    const inRgb = (await rawOf(input)).data;
    const { result } = await runOp('outpaint', { image: bufferInput('gravel.png', input) }, { right: 40, output_format: 'png', seed: 7 });
    const out = new Uint8Array((await rawOf(result.data!)).data);
    const known = { x0: 0, y0: 0, x1: 160, y1: 160 };
    const m = { left: 0, top: 0, right: 40, bottom: 0 };
    const ours = Math.abs(seamFigure(out, 200, 160, known, 'right'));
    for (const kind of ['replicate', 'mirror'] as const) {
      const base = await baselineFill(new Uint8Array(inRgb), 160, 160, m, kind);
      expect(ours).toBeLessThan(Math.abs(seamFigure(base, 200, 160, known, 'right')));
    }
    // Texture, not a smear, next to the border: the first 8 columns of the band have a luma
    // spread comparable to the real band's.
    const spread = (rgb: Uint8Array, x0: number, x1: number) => {
      const v: number[] = [];
      for (let y = 0; y < 160; y++) for (let x = x0; x < x1; x++) v.push(rgb[(y * 200 + x) * 3]!);
      const mean = v.reduce((a, b) => a + b, 0) / v.length;
      return Math.sqrt(v.reduce((a, b) => a + (b - mean) ** 2, 0) / v.length);
    };
    expect(spread(out, 160, 168)).toBeGreaterThan(0.5 * spread(new Uint8Array(full.data), 160, 168));
  });

  it('creativity 1 keeps full texture far from the border; creativity 0 fades it (more high-frequency energy at 1)', async () => {
    const input = await sharp(gravelPng).extract({ left: 0, top: 0, width: 160, height: 160 }).png().toBuffer();
    const hf = async (creativity: number) => {
      const { result } = await runOp('outpaint', { image: bufferInput('gravel.png', input) }, { right: 48, output_format: 'png', seed: 5, creativity });
      const { data, info } = await rawOf(result.data!);
      // Mean |Laplacian| of luma over the band columns 24..46 px past the border.
      let e = 0, n = 0;
      const Y = (x: number, y: number) => data[(y * info.width + x) * 3]! * 0.299 + data[(y * info.width + x) * 3 + 1]! * 0.587 + data[(y * info.width + x) * 3 + 2]! * 0.114;
      for (let y = 1; y < 159; y++) for (let x = 184; x < 206; x++, n++) e += Math.abs(4 * Y(x, y) - Y(x - 1, y) - Y(x + 1, y) - Y(x, y - 1) - Y(x, y + 1));
      return e / n;
    };
    const [c0, c1] = [await hf(0), await hf(1)];
    expect(c1).toBeGreaterThan(2 * c0);
    // The creative fill is as busy as the original gravel far from the border.
    const orig = new Uint8Array((await rawOf(input)).data);
    let e = 0, n = 0;
    const Y = (x: number, y: number) => orig[(y * 160 + x) * 3]!;
    for (let y = 1; y < 159; y++) for (let x = 100; x < 150; x++, n++) e += Math.abs(4 * Y(x, y) - Y(x - 1, y) - Y(x + 1, y) - Y(x, y - 1) - Y(x, y + 1));
    expect(c1).toBeGreaterThan(0.5 * (e / n));
  });

  it('seam blending pulls a systematic offset to the original but leaves texture-sized steps alone', () => {
    // 40x20 canvas, original = left 20 columns; band 20 columns on the right.
    const w = 40, h = 20;
    const mk = (orig: (x: number, y: number) => number, band: (x: number, y: number) => number): Level => {
      const img = new Float32Array(w * h * 3);
      for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) img.fill(x < 20 ? orig(x, y) : band(x, y), (y * w + x) * 3, (y * w + x) * 3 + 3);
      return { w, h, img, kx0: 0, ky0: 0, kx1: 20, ky1: h };
    };
    // A flat original at 200 and a band that came out at 50: the first band column meets 200,
    // the correction fades to nothing by the blend width.
    const flat = mk(() => 200, () => 50);
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

  it('detail fade keeps the band mean and the original; creativity 1 is the identity', () => {
    const w = 64, h = 32;
    const rng = mulberry32(9);
    const img = new Float32Array(w * h * 3);
    for (let i = 0; i < img.length; i++) img[i] = 60 + (rng() % 120);
    const L: Level = { w, h, img, kx0: 0, ky0: 0, kx1: 32, ky1: h };
    const copy = Float32Array.from(img);
    fadeDetail({ ...L, img: copy }, fadeFor(1));
    expect(copy).toEqual(img);
    const faded = Float32Array.from(img);
    fadeDetail({ ...L, img: faded }, fadeFor(0));
    const stats = (a: Float32Array, x0: number) => {
      let s = 0, s2 = 0, n = 0;
      for (let y = 0; y < h; y++) for (let x = x0; x < w; x++, n++) { s += a[(y * w + x) * 3]!; s2 += a[(y * w + x) * 3]! ** 2; }
      return { mean: s / n, sd: Math.sqrt(s2 / n - (s / n) ** 2) };
    };
    for (let y = 0; y < h; y++) for (let x = 0; x < 32; x++) expect(faded[(y * w + x) * 3]).toBe(img[(y * w + x) * 3]);
    const a = stats(img, 48), b = stats(faded, 48);
    expect(Math.abs(a.mean - b.mean)).toBeLessThan(4);
    expect(b.sd).toBeLessThan(0.5 * a.sd);
  });

  it('straight blend carries structure that runs across the border, leaves texture and the original alone', () => {
    // 40x48 canvas, original = top 32 rows; band 16 rows at the bottom, filled with noise.
    const w = 40, h = 48, kh = 32;
    const rng = mulberry32(5);
    const mk = (orig: (x: number, y: number) => number): Level => {
      const img = new Float32Array(w * h * 3);
      for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) img.fill(y < kh ? orig(x, y) : 60 + (rng() % 120), (y * w + x) * 3, (y * w + x) * 3 + 3);
      return { w, h, img, kx0: 0, ky0: 0, kx1: w, ky1: kh };
    };
    const err = (L: Level, y0: number) => {
      let e = 0, n = 0;
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

  it('seam trust: 1 where the border is copied exactly, down to its floor where no copy fits, 1 at creativity 1', () => {
    const w = 48, h = 32;
    const rng = mulberry32(2);
    const img = new Float32Array(w * h * 3);
    for (let i = 0; i < img.length; i++) img[i] = 60 + (rng() % 120);
    const L: Level = { w, h, img, kx0: 0, ky0: 0, kx1: 32, ky1: h };
    const sx = new Int32Array(w * h).fill(16), sy = new Int32Array(w * h).fill(16);
    const exact = seamTrust(L, { sx, sy, dist: new Float32Array(w * h) }, 3, 0);
    const poor = seamTrust(L, { sx, sy, dist: new Float32Array(w * h).fill(1e7) }, 3, 0);
    const free = seamTrust(L, { sx, sy, dist: new Float32Array(w * h).fill(1e7) }, 3, 1);
    for (let y = 0; y < h; y++) for (let x = 32; x < w; x++) {
      expect(exact[y * w + x]).toBeCloseTo(1, 5);
      expect(poor[y * w + x]).toBeCloseTo(0.5, 5);
      expect(free[y * w + x]).toBeCloseTo(1, 5);
    }
  });

  it('is reproducible with a seed; creativity with another seed changes the fill', async () => {
    const opts = { bottom: 32, output_format: 'png', creativity: 0.6 };
    const a = await runOp('outpaint', { image: bufferInput('cat.png', photo) }, { ...opts, seed: 11 });
    const b = await runOp('outpaint', { image: bufferInput('cat.png', photo) }, { ...opts, seed: 11 });
    const c = await runOp('outpaint', { image: bufferInput('cat.png', photo) }, { ...opts, seed: 12 });
    expect(Buffer.compare(a.result.data!, b.result.data!)).toBe(0);
    expect(Buffer.compare(a.result.data!, c.result.data!)).not.toBe(0);
    expect(a.result.meta?.seed).toBe(11);
  });

  it('flattens transparency with a warning', async () => {
    const { result, warnings } = await runOp('outpaint', { image: bufferInput('apple.png', alphaPng) }, { left: 20, output_format: 'png', seed: 1 });
    expect(warnings.join(' ')).toMatch(/transparency/);
    const meta = await sharp(result.data!).metadata();
    expect([meta.width, meta.height, meta.channels]).toEqual([180, 160, 3]);
  });

  it('honours cancellation mid-run', async () => {
    const big = await sharp(fixture('images/astronaut.png')).png().toBuffer();
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 150);
    await expectCode(runOp('outpaint', { image: bufferInput('astronaut.png', big) }, { right: 400, seed: 1 }, ac.signal), 'job_cancelled');
  });

  describe('errors', () => {
    const img = () => ({ image: bufferInput('cat.png', photo) });
    it.each([
      [{ right: 2001 }, /right/],
      [{ left: -1 }, /left/],
      [{ top: 10.5 }, /top/],
      [{ bottom: 'lots' }, /bottom/],
      [{}, /at least one of left, top, right, bottom/],
      [{ left: 0, top: 0, right: 0, bottom: 0 }, /at least one/],
      [{ right: 10, creativity: 1.5 }, /creativity/],
      [{ right: 10, creativity: -0.1 }, /creativity/],
      [{ right: 10, output_format: 'webp' }, /output_format/],
      [{ right: 10, seed: -5 }, /seed/],
    ])('%j is invalid_parameter', async (opts, msg) => {
      const p = runOp('outpaint', img(), opts);
      await expectCode(p, 'invalid_parameter');
      await expect(p).rejects.toThrow(msg);
    });

    it('accepts the limits themselves (2000 px, creativity 0 and 1) in validation', async () => {
      const { getOperation } = await import('../../../src/ops/registry.js');
      const { parseOptions } = await import('../../../src/ops/validate.js');
      const o = parseOptions(getOperation('outpaint')!, { left: '2000', creativity: '1' }, 'flag');
      expect(o).toMatchObject({ left: 2000, top: 0, creativity: 1, output_format: 'jpeg' });
    });

    it('rejects images below 128x128 with image_too_small', async () => {
      const small = await sharp(photo).resize(127, 200).png().toBuffer();
      await expectCode(runOp('outpaint', { image: bufferInput('small.png', small) }, { right: 10 }), 'image_too_small');
    });

    it('rejects images above 6000 px with image_too_large', async () => {
      const wide = await sharp({ create: { width: 6001, height: 128, channels: 3, background: '#808080' } }).png().toBuffer();
      await expectCode(runOp('outpaint', { image: bufferInput('wide.png', wide) }, { right: 10 }), 'image_too_large');
    });

    it('rejects formats other than JPEG and PNG with unsupported_format', async () => {
      const webp = await sharp(photo).webp().toBuffer();
      await expectCode(runOp('outpaint', { image: bufferInput('cat.webp', webp) }, { right: 10 }), 'unsupported_format');
    });

    it('rejects files over 25 MB with file_size_too_large', async () => {
      const input = { name: 'huge.png', data: photo, size: 25 * 1024 * 1024 + 1 };
      await expectCode(runOp('outpaint', { image: input }, { right: 10 }), 'file_size_too_large');
    });

    it('rejects undecodable bytes with invalid_image', async () => {
      await expectCode(runOp('outpaint', { image: bufferInput('junk.png', Buffer.from('not an image at all')) }, { right: 10 }), 'invalid_image');
    });
  });
});

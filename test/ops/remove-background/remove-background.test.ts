import { describe, expect, it, beforeAll } from 'vitest';
import sharp from 'sharp';
import { bufferInput, fixture, runOp } from '../../helpers.js';
import { makeComposite, scoreAlpha, type Composite } from './composites.js';
import { ImgtoolError } from '../../../src/errors.js';

const OP = 'remove-background';

async function decodeOut(png: Buffer) {
  const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels };
}

function alphaOf(img: { data: Buffer; channels: number; width: number; height: number }): Uint8Array {
  const n = img.width * img.height;
  const a = new Uint8Array(n);
  for (let i = 0; i < n; i++) a[i] = img.data[i * img.channels + img.channels - 1]!;
  return a;
}

describe('remove-background: quality on composites with exact alpha', () => {
  // One case per kind of backdrop (texture, photo); ISNet is the default model.
  const cases: Array<[string, string]> = [
    ['handbag', 'textures/brick.png'],
    ['basketball', 'textures/gravel.png'],
    ['sneaker', 'textures/grass.png'],
  ];
  it.each(cases)(
    '%s on %s: IoU >= 0.9 against the true alpha (isnet)',
    async (cut, bg) => {
      const c = await makeComposite(cut, bg);
      const { result, progress } = await runOp(OP, { image: bufferInput(`${c.name}.jpg`, c.file) });
      const out = await decodeOut(result.data!);
      expect([out.width, out.height, out.channels]).toEqual([c.width, c.height, 4]);
      const s = scoreAlpha(alphaOf(out), c.alpha, c.width, c.height);
      expect(s.iou).toBeGreaterThanOrEqual(0.9);
      expect(s.mae).toBeLessThan(0.05);
      expect(result.credits).toBe(1);
      expect(progress.at(-1)?.fraction).toBe(1);
    },
    120_000,
  );

  it('u2netp also finds the subject (IoU >= 0.8)', async () => {
    const c = await makeComposite('apple', 'textures/brick.png');
    const { result } = await runOp(OP, { image: bufferInput('a.png', c.file) }, { model: 'u2netp' });
    const out = await decodeOut(result.data!);
    expect(scoreAlpha(alphaOf(out), c.alpha, c.width, c.height).iou).toBeGreaterThanOrEqual(0.8);
  }, 60_000);

  it('decontaminates edge colours: semi-transparent pixels lose the backdrop colour', async () => {
    // A pure green backdrop makes any fringe measurable: true foreground vs composite vs output.
    const side = 168;
    const fg = await sharp(fixture('cutouts/basketball.png')).resize(side, side).ensureAlpha().raw().toBuffer();
    const W = 240,
      H = 200,
      L = 36,
      T = 16;
    const rgb = Buffer.alloc(W * H * 3);
    for (let i = 0; i < W * H; i++) rgb[i * 3 + 1] = 255;
    const truth: Array<{ i: number; f: number[] }> = [];
    for (let y = 0; y < side; y++)
      for (let x = 0; x < side; x++) {
        const s = (y * side + x) * 4,
          a = fg[s + 3]!,
          i = (T + y) * W + L + x;
        for (let c = 0; c < 3; c++) rgb[i * 3 + c] = Math.round((fg[s + c]! * a + (c === 1 ? 255 : 0) * (255 - a)) / 255);
        if (a > 20 && a < 235) truth.push({ i, f: [fg[s]!, fg[s + 1]!, fg[s + 2]!] });
      }
    expect(truth.length).toBeGreaterThan(50);
    const file = await sharp(rgb, { raw: { width: W, height: H, channels: 3 } })
      .png()
      .toBuffer();
    const { result } = await runOp(OP, { image: bufferInput('green.png', file) }, { model: 'u2netp' });
    const out = await decodeOut(result.data!);
    let before = 0,
      after = 0,
      n = 0;
    for (const { i, f } of truth) {
      if (out.data[i * 4 + 3]! === 0) continue;
      before += Math.abs(rgb[i * 3 + 1]! - f[1]!);
      after += Math.abs(out.data[i * 4 + 1]! - f[1]!);
      n++;
    }
    expect(n).toBeGreaterThan(30);
    // The composite's green channel is off by the backdrop's share; the output must remove most of it.
    expect(after / n).toBeLessThan((before / n) * 0.5);
  }, 60_000);

  it('an RGBA input keeps its alpha as a hint: transparent stays transparent, subject kept', async () => {
    const path = fixture('cutouts/handbag.png');
    const src = await sharp(path).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    const truth = alphaOf({ data: src.data, channels: 4, width: src.info.width, height: src.info.height });
    const { result } = await runOp(OP, { image: path }, { model: 'u2netp' });
    const out = await decodeOut(result.data!);
    const a = alphaOf(out);
    for (let i = 0; i < a.length; i++) if (truth[i] === 0) expect(a[i]).toBe(0);
    expect(scoreAlpha(a, truth, out.width, out.height).iou).toBeGreaterThanOrEqual(0.95);
  }, 60_000);
});

describe('remove-background: options and dimensions', () => {
  let c: Composite;
  let plainAlpha: Uint8Array;
  let box: { left: number; top: number; width: number; height: number };
  const input = () => ({ image: bufferInput('c.jpg', c.file) });
  const fast = { model: 'u2netp' };

  beforeAll(async () => {
    c = await makeComposite('handbag', 'textures/brick.png', { width: 300, height: 220, scale: 0.6, left: 40, top: 30 });
    const { result } = await runOp(OP, input(), fast);
    const out = await decodeOut(result.data!);
    plainAlpha = alphaOf(out);
    let x0 = out.width,
      y0 = out.height,
      x1 = -1,
      y1 = -1;
    for (let y = 0; y < out.height; y++)
      for (let x = 0; x < out.width; x++) {
        if (plainAlpha[y * out.width + x]! > 0) {
          x0 = Math.min(x0, x);
          x1 = Math.max(x1, x);
          y0 = Math.min(y0, y);
          y1 = Math.max(y1, y);
        }
      }
    box = { left: x0, top: y0, width: x1 - x0 + 1, height: y1 - y0 + 1 };
    expect(box.width).toBeGreaterThan(50);
  }, 60_000);

  it('crop: exactly the subject box, the same pixels shifted', async () => {
    const { result } = await runOp(OP, input(), { ...fast, crop: true });
    const out = await decodeOut(result.data!);
    expect([out.width, out.height]).toEqual([box.width, box.height]);
    const a = alphaOf(out);
    // The cropped pixels are the uncropped ones, shifted.
    for (let y = 0; y < out.height; y += 7)
      for (let x = 0; x < out.width; x += 7) {
        expect(a[y * out.width + x]).toBe(plainAlpha[(y + box.top) * c.width + x + box.left]);
      }
  }, 60_000);

  it.each([
    [{ margin: '10px' }, 10, 10, 10, 10],
    [{ margin: '10%' }, 30, 30, 22, 22],
    [{ margin: '5%', margin_left: '0px', margin_bottom: '49%' }, 0, 15, 11, 108],
    [{ margin_top: '3px' }, 0, 0, 3, 0],
  ] as const)(
    'crop with margins %j is exact to the pixel',
    async (m, l, r, t, b) => {
      const { result } = await runOp(OP, input(), { ...fast, crop: true, ...m });
      const out = await decodeOut(result.data!);
      expect([out.width, out.height]).toEqual([box.width + l + r, box.height + t + b]);
      const a = alphaOf(out);
      // The margin is transparent and the subject sits at (l, t).
      for (let x = 0; x < out.width; x++) for (let y = 0; y < t; y++) expect(a[y * out.width + x]).toBe(0);
      expect(a[(t + box.height) * out.width - 1 - r] ?? 0).toBe(plainAlpha[(box.top + box.height - 1) * c.width + box.left + box.width - 1]);
    },
    60_000,
  );

  it('margins without crop: same frame, and a warning', async () => {
    const { result, warnings } = await runOp(OP, input(), { ...fast, margin: '10%' });
    const out = await decodeOut(result.data!);
    expect([out.width, out.height]).toEqual([c.width, c.height]);
    expect(warnings.join(' ')).toMatch(/crop/);
  }, 60_000);

  it('mask_only: one greyscale channel equal to the cut-out alpha; with crop, the same box', async () => {
    const { result } = await runOp(OP, input(), { ...fast, mask_only: true });
    const meta = await sharp(result.data!).metadata();
    expect([meta.format, meta.width, meta.height, meta.channels, meta.space]).toEqual(['png', c.width, c.height, 1, 'b-w']);
    const grey = await sharp(result.data!).extractChannel(0).raw().toBuffer();
    expect(grey.equals(Buffer.from(plainAlpha))).toBe(true);
    const cropped = await decodeOut((await runOp(OP, input(), { ...fast, mask_only: true, crop: true, margin: '4px' })).result.data!);
    expect([cropped.width, cropped.height]).toEqual([box.width + 8, box.height + 8]);
  }, 60_000);

  it('background_color flattens onto the colour (opaque PNG)', async () => {
    const { result } = await runOp(OP, input(), { ...fast, background_color: '#00f' });
    const meta = await sharp(result.data!).metadata();
    expect(meta.format).toBe('png');
    expect(meta.hasAlpha).toBe(false);
    const out = await decodeOut(result.data!);
    expect([...out.data.subarray(0, 3)]).toEqual([0, 0, 255]);
  }, 60_000);

  for (const [label, light, side] of [
    ['left', { x: -0.8, y: -0.5, z: 0.6 }, 'right'],
    ['right', { x: 0.8, y: -0.5, z: 0.6 }, 'left'],
    ['back-right', { x: 0.5, y: 0.8, z: 0.6 }, 'front-left'],
  ] as const) {
    it(`shadow from a light at the ${label} falls only outside the subject, on the ${side}`, async () => {
      const shadow = { enabled: true, opacity: 0.8, light_source: { size: 0.3, position: light } };
      const { result } = await runOp(OP, input(), { ...fast, shadow });
      expect(result.credits).toBe(4);
      const out = await decodeOut(result.data!);
      expect([out.width, out.height]).toEqual([c.width, c.height]);
      const a = alphaOf(out);
      let mass = 0,
        sx = 0,
        sy = 0,
        subjMass = 0,
        ux = 0,
        uy = 0;
      for (let y = 0; y < c.height; y++)
        for (let x = 0; x < c.width; x++) {
          const i = y * c.width + x;
          const base = plainAlpha[i]!;
          if (base === 255) expect(a[i]).toBe(255);
          if (base === 255) {
            subjMass++;
            ux += x;
            uy += y;
          }
          if (base === 0 && a[i]! > 0) {
            mass += a[i]!;
            sx += a[i]! * x;
            sy += a[i]! * y;
          }
        }
      expect(mass).toBeGreaterThan(255 * 100);
      const [cx, cy, subX] = [sx / mass, sy / mass, ux / subjMass];
      if (light.x < 0) expect(cx).toBeGreaterThan(subX + 5);
      else expect(cx).toBeLessThan(subX - 5);
      // Light in front throws the shadow back (up the image) and vice versa, relative to the ground line.
      const ground = box.top + box.height;
      if (light.y < 0) expect(cy).toBeLessThan(ground - 5);
      else expect(cy).toBeGreaterThan(uy / subjMass);
    }, 60_000);
  }

  it('shadow with crop: the canvas grows to hold the shadow, still contains the whole subject', async () => {
    const shadow = { enabled: true, light_source: { size: 0.5, position: { x: 0.9, y: -0.2, z: 0.3 } } };
    const { result } = await runOp(OP, input(), { ...fast, shadow, crop: true, margin: '2px' });
    const out = await decodeOut(result.data!);
    expect(out.width).toBeGreaterThan(box.width + 4);
    expect(out.height).toBeGreaterThanOrEqual(box.height + 4);
    expect(result.meta?.crop).toMatchObject({ width: out.width, height: out.height });
  }, 60_000);
});

describe('remove-background: inputs', () => {
  it('applies EXIF orientation and accepts WebP and AVIF', async () => {
    const c = await makeComposite('apple', 'textures/gravel.png', { width: 200, height: 120 });
    const rotated = await sharp(c.file).jpeg().withMetadata({ orientation: 6 }).toBuffer();
    const r1 = await decodeOut((await runOp(OP, { image: bufferInput('r.jpg', rotated) }, { model: 'u2netp' })).result.data!);
    expect([r1.width, r1.height]).toEqual([120, 200]);
    for (const fmt of ['webp', 'avif'] as const) {
      const buf = await sharp(c.file)[fmt]().toBuffer();
      const r = await decodeOut((await runOp(OP, { image: bufferInput(`x.${fmt}`, buf) }, { model: 'u2netp', mask_only: true })).result.data!);
      expect([r.width, r.height]).toEqual([200, 120]);
    }
  }, 60_000);

  const bad: Array<[string, () => Promise<Buffer>, string]> = [
    ['empty file', async () => Buffer.alloc(0), 'invalid_image'],
    ['truncated JPEG', async () => (await sharp(fixture('images/fruits.jpg')).jpeg().toBuffer()).subarray(0, 4000), 'invalid_image'],
    ['text file renamed .jpg', async () => Buffer.from('this is not an image\n'.repeat(20)), 'invalid_image'],
    [
      '63x63',
      async () =>
        sharp({ create: { width: 63, height: 63, channels: 3, background: '#888' } })
          .png()
          .toBuffer(),
      'image_too_small',
    ],
    // 10001x10 breaks both limits; the maximum is reported first. 10001x64 isolates the maximum.
    [
      '10001x10',
      async () =>
        sharp({ create: { width: 10001, height: 10, channels: 3, background: '#888' } })
          .png()
          .toBuffer(),
      'image_too_large',
    ],
    [
      '10001x64',
      async () =>
        sharp({ create: { width: 10001, height: 64, channels: 3, background: '#888' } })
          .png()
          .toBuffer(),
      'image_too_large',
    ],
    ['26 MB', async () => Buffer.concat([await sharp(fixture('images/fruits.jpg')).toBuffer(), Buffer.alloc(26 * 1024 * 1024)]), 'file_size_too_large'],
  ];
  it.each(bad)(
    '%s gives its error code and no output',
    async (_label, make, code) => {
      const data = await make();
      const err = await runOp(OP, { image: bufferInput('bad.jpg', data) }, { model: 'u2netp' }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ImgtoolError);
      expect((err as ImgtoolError).code).toBe(code);
      expect((err as ImgtoolError).message).toContain('bad.jpg');
    },
    30_000,
  );

  it('a cancelled job stops with job_cancelled', async () => {
    const c = await makeComposite('apple', 'textures/gravel.png', { width: 128, height: 128 });
    const ac = new AbortController();
    ac.abort();
    await expect(runOp(OP, { image: bufferInput('c.jpg', c.file) }, { model: 'u2netp' }, ac.signal)).rejects.toMatchObject({ code: 'job_cancelled' });
  });
});

// The upscale pipeline end to end through its schema (ESRGAN slim unless the test is about
// a model, small inputs so the file runs in seconds).
import { describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { bufferInput, fixture, runOp } from '../../helpers.js';
import { upscaleRgb } from '../../../src/engine/esrgan.js';
import { backProject } from '../../../src/ops/upscale/backproject.js';
import { channelMeans, cutoutRaw, decode, fromRaw, photoRaw, psnr, shrinkRgb } from './media.js';

const SLIM = { model: 'slim' };

/** libvips reports a palette PNG's bit depth; sharp's Metadata type does not declare the field. */
const paletteBits = (m: object) => (m as { paletteBitDepth?: number }).paletteBitDepth;

describe('upscale: size, format, credits', () => {
  for (const scale of [2, 4] as const) {
    it(`${scale}x: output is exactly ${scale} x the input, JPEG q92 4:4:4 for an opaque input, and looks like the input`, async () => {
      const src = await photoRaw(80, 64);
      const jpg = await fromRaw(src).png().toBuffer();
      const { result } = await runOp('upscale', { image: bufferInput('photo.png', jpg) }, { scale, ...SLIM });
      expect(result).toMatchObject({ ext: 'jpg', contentType: 'image/jpeg', credits: scale === 4 ? 2 : 1 });
      expect(result.meta).toMatchObject({ width: 80 * scale, height: 64 * scale, scale, model: 'slim' });
      const meta = await sharp(result.data!).metadata();
      expect([meta.format, meta.width, meta.height, meta.channels, meta.chromaSubsampling]).toEqual(['jpeg', 80 * scale, 64 * scale, 3, '4:4:4']);
      // Shrunk back it must match the input: catches swapped channels, offsets or garbage.
      const back = await shrinkRgb(result.data!, 80, 64);
      expect(psnr(back.data, src.data)).toBeGreaterThan(27);
    });
  }

  it('accepts scale as a numeric string (multipart) and defaults the model from the schema', async () => {
    const png = await fromRaw(await photoRaw(64, 64))
      .png()
      .toBuffer();
    const { result } = await runOp('upscale', { image: bufferInput('a.png', png) }, { scale: '2', model: 'slim' });
    expect(result.meta).toMatchObject({ width: 128, height: 128 });
    const { getOperation } = await import('../../../src/ops/registry.js');
    expect(getOperation('upscale')!.options.parse({ scale: 2 }).model).toBe('thick');
  });

  it('emits progress per tile, in order, ending at 1', async () => {
    // 200 px wide with the default 192 px tile: two tiles.
    const png = await fromRaw(await photoRaw(200, 64))
      .png()
      .toBuffer();
    const { progress } = await runOp('upscale', { image: bufferInput('wide.png', png) }, { scale: 2, ...SLIM });
    const tiles = progress.filter((p) => p.unit === 'tiles' && p.done! > 0);
    expect(tiles.map((p) => [p.done, p.total])).toEqual([
      [1, 2],
      [2, 2],
    ]);
    const fractions = progress.map((p) => p.fraction);
    expect(fractions).toEqual([...fractions].sort((a, b) => a - b));
    expect(fractions.at(-1)).toBe(1);
  });

  it('stops with job_cancelled when the signal fires, before or during the tiles', async () => {
    const png = await fromRaw(await photoRaw(200, 200))
      .png()
      .toBuffer();
    const before = new AbortController();
    before.abort();
    await expect(runOp('upscale', { image: bufferInput('a.png', png) }, { scale: 2, ...SLIM }, before.signal)).rejects.toMatchObject({ code: 'job_cancelled' });
    const during = new AbortController();
    const { getOperation } = await import('../../../src/ops/registry.js');
    const run = await getOperation('upscale')!.load();
    const p = run(
      { operation: 'upscale', inputs: { image: bufferInput('a.png', png) }, options: { scale: 2, model: 'slim' } as never },
      { signal: during.signal, onProgress: (e) => e.done === 1 && during.abort(), warn: () => {}, tempPath: () => '/nonexistent' },
    );
    await expect(p).rejects.toMatchObject({ code: 'job_cancelled' });
  });
});

describe('upscale: Real-ESRGAN models', () => {
  for (const [model, scale] of [
    ['fast', 2],
    ['fast', 4],
    ['realesrgan', 2],
  ] as const) {
    it(`${model} at ${scale}x: exact output size, JPEG, and shrunk back it resembles the input`, { timeout: 120_000 }, async () => {
      const src = await photoRaw(72, 64);
      const png = await fromRaw(src).png().toBuffer();
      const { result } = await runOp('upscale', { image: bufferInput('p.png', png) }, { scale, model });
      expect(result).toMatchObject({ ext: 'jpg', credits: scale === 4 ? 2 : 1, meta: { width: 72 * scale, height: 64 * scale, model, scale } });
      const back = await shrinkRgb(result.data!, 72, 64);
      // GAN models redraw texture and are not back-projected, so the bar is lower than the
      // fidelity models' 27 dB; a wrong channel order, offset or scale gives well under 20.
      expect(psnr(back.data, src.data)).toBeGreaterThan(22);
    });
  }
});

describe('upscale: texture (realesrgan, fast)', () => {
  /** A 64 px crop of the camera fixture's gravel at native resolution: fine texture the GAN flattens. */
  const gravel = () => sharp(fixture('images/camera.png')).removeAlpha().extract({ left: 300, top: 420, width: 64, height: 64 }).png().toBuffer();
  /** Mean luma gradient magnitude of a decoded image, optionally where `mask` is set. */
  const gradient = (img: { data: Buffer; width: number; height: number; channels: number }, mask?: Uint8Array) => {
    const { data, width: w, height: h, channels: c } = img;
    const y = (x: number, r: number) => 0.299 * data[(r * w + x) * c]! + 0.587 * data[(r * w + x) * c + 1]! + 0.114 * data[(r * w + x) * c + 2]!;
    let sum = 0;
    let n = 0;
    for (let r = 1; r < h - 1; r++)
      for (let x = 1; x < w - 1; x++) {
        if (mask && !mask[r * w + x]) continue;
        sum += Math.hypot(y(x + 1, r) - y(x - 1, r), y(x, r + 1) - y(x, r - 1)) / 2;
        n++;
      }
    return sum / n;
  };

  it('gives flattened gravel its grain back (more gradient energy, shrunk back closer to the input), deterministically', { timeout: 120_000 }, async () => {
    const png = await gravel();
    const src = await decode(png);
    const at = async (texture: number) => (await runOp('upscale', { image: bufferInput('gravel.png', png) }, { scale: 4, model: 'fast', texture })).result;
    const plain = await at(0);
    const textured = await at(0.75);
    expect(textured.meta).toMatchObject({ model: 'fast', texture: 0.75 });
    const g0 = gradient(await decode(plain.data!));
    const g1 = gradient(await decode(textured.data!));
    expect(g1).toBeGreaterThan(g0 * 1.15);
    // The texture is the input's: shrunk back, the output is closer to the input than the model's.
    const back0 = await shrinkRgb(plain.data!, 64, 64);
    const back1 = await shrinkRgb(textured.data!, 64, 64);
    expect(psnr(back1.data, src.data)).toBeGreaterThan(psnr(back0.data, src.data) + 0.3);
    // Deterministic: the same request gives the same bytes.
    expect(Buffer.compare((await at(0.75)).data!, textured.data!)).toBe(0);
  });

  it('warns that texture is ignored when a fidelity model is asked for with a non-default texture', async () => {
    const png = await fromRaw(await photoRaw(64, 64))
      .png()
      .toBuffer();
    const { warnings } = await runOp('upscale', { image: bufferInput('p.png', png) }, { scale: 2, model: 'slim', texture: 0.2 });
    expect(warnings).toEqual(["texture applies to realesrgan and fast only; slim keeps the input's texture already, so it was ignored"]);
    expect((await runOp('upscale', { image: bufferInput('p.png', png) }, { scale: 2, model: 'slim' })).warnings).toEqual([]);
  });

  it('leaves edges to the model: on the astronaut helmet rim and zip, no overshoot beyond what the model drew', { timeout: 120_000 }, async () => {
    const png = await sharp(fixture('images/astronaut.png')).removeAlpha().extract({ left: 150, top: 200, width: 64, height: 64 }).png().toBuffer();
    const at = async (texture: number) =>
      decode((await runOp('upscale', { image: bufferInput('rim.png', png) }, { scale: 4, model: 'fast', texture })).result.data!);
    const plain = await at(0);
    const textured = await at(1);
    // Edge pixels: where the model's own output has a strong luma gradient.
    const w = plain.width;
    const mask = new Uint8Array(w * plain.height);
    const y = (d: Buffer, i: number) => 0.299 * d[i * 3]! + 0.587 * d[i * 3 + 1]! + 0.114 * d[i * 3 + 2]!;
    let edges = 0;
    for (let r = 1; r < plain.height - 1; r++)
      for (let x = 1; x < w - 1; x++) {
        const i = r * w + x;
        const g = Math.hypot(y(plain.data, i + 1) - y(plain.data, i - 1), y(plain.data, i + w) - y(plain.data, i - w)) / 2;
        if (g > 20) {
          mask[i] = 1;
          edges++;
        }
      }
    expect(edges).toBeGreaterThan(1000);
    let diff = 0;
    for (let i = 0; i < mask.length; i++) if (mask[i]) diff += Math.abs(y(textured.data, i) - y(plain.data, i));
    expect(diff / edges).toBeLessThan(1.5);
    // Gradient at the edges does not grow (no added ringing or sharpening).
    expect(gradient(textured, mask)).toBeLessThan(gradient(plain, mask) * 1.03);
  });
});

describe('upscale: alpha', () => {
  it('an RGBA input gives a PNG that stays transparent where the input was transparent and opaque where it was opaque', async () => {
    const src = await cutoutRaw(96);
    const png = await fromRaw(src).png().toBuffer();
    const scale = 4;
    const { result } = await runOp('upscale', { image: bufferInput('apple.png', png) }, { scale, ...SLIM });
    expect(result).toMatchObject({ ext: 'png', contentType: 'image/png' });
    const out = await decode(result.data!);
    expect([out.width, out.height, out.channels]).toEqual([96 * scale, 96 * scale, 4]);

    // An output pixel whose Lanczos3 support (3 source px each side) is uniformly transparent
    // (or opaque) in the source must be exactly that.
    const alphaAt = (x: number, y: number) => src.data[(y * 96 + x) * 4 + 3]!;
    let clear = 0;
    let solid = 0;
    let edge = 0;
    for (let y = 0; y < out.height; y++) {
      for (let x = 0; x < out.width; x++) {
        const sx = Math.floor(x / scale);
        const sy = Math.floor(y / scale);
        let min = 255;
        let max = 0;
        for (let dy = -3; dy <= 3; dy++)
          for (let dx = -3; dx <= 3; dx++) {
            const a = alphaAt(Math.min(95, Math.max(0, sx + dx)), Math.min(95, Math.max(0, sy + dy)));
            min = Math.min(min, a);
            max = Math.max(max, a);
          }
        const a = out.data[(y * out.width + x) * 4 + 3]!;
        if (max === 0) {
          clear++;
          expect(a).toBe(0);
        } else if (min === 255) {
          solid++;
          expect(a).toBe(255);
        } else edge++;
      }
    }
    expect(clear).toBeGreaterThan(out.width * out.height * 0.1);
    expect(solid).toBeGreaterThan(out.width * out.height * 0.1);
    expect(edge).toBeGreaterThan(0);
  });

  it('the colour stored under fully transparent pixels does not leak into the visible result', async () => {
    const src = await cutoutRaw(72);
    const paint = (rgb: [number, number, number]) => {
      const data = Buffer.from(src.data);
      for (let i = 0; i < data.length; i += 4) if (data[i + 3] === 0) data.set(rgb, i);
      return fromRaw({ ...src, data })
        .png()
        .toBuffer();
    };
    const magenta = await paint([255, 0, 255]);
    const green = await paint([0, 255, 0]);
    const a = await decode((await runOp('upscale', { image: bufferInput('m.png', magenta) }, { scale: 2, ...SLIM })).result.data!);
    const b = await decode((await runOp('upscale', { image: bufferInput('g.png', green) }, { scale: 2, ...SLIM })).result.data!);
    let visible = 0;
    let differing = 0;
    for (let i = 0; i < a.data.length; i += 4) {
      if (a.data[i + 3] === 0) continue;
      visible++;
      if (a.data[i] !== b.data[i] || a.data[i + 1] !== b.data[i + 1] || a.data[i + 2] !== b.data[i + 2]) differing++;
    }
    expect(visible).toBeGreaterThan(1000);
    expect(differing).toBe(0);

    // Without the fill the model itself would leak it: the same inputs straight through ESRGAN.
    const raw = async (png: Buffer) => new Uint8Array(await sharp(png).removeAlpha().raw().toBuffer());
    const ua = await upscaleRgb({ data: await raw(magenta), width: 72, height: 72 }, { model: 'slim', scale: 2 });
    const ub = await upscaleRgb({ data: await raw(green), width: 72, height: 72 }, { model: 'slim', scale: 2 });
    let leaked = 0;
    for (let i = 0, p = 0; p < 144 * 144; p++, i += 3) {
      if (a.data[p * 4 + 3]! >= 128 && Math.abs(ua.data[i]! - ub.data[i]!) > 8) leaked++;
    }
    expect(leaked).toBeGreaterThan(50);
  });
});

describe('upscale: input kinds are converted to sRGB consistently', () => {
  const W = 80;
  const H = 64;

  async function upscaleBack(buf: Buffer, name: string): Promise<{ back: Awaited<ReturnType<typeof shrinkRgb>>; ext: string; channels: number }> {
    const { result } = await runOp('upscale', { image: bufferInput(name, buf) }, { scale: 2, ...SLIM });
    const meta = await sharp(result.data!).metadata();
    expect([meta.width, meta.height]).toEqual([W * 2, H * 2]);
    return { back: await shrinkRgb(result.data!, W, H), ext: result.ext, channels: meta.channels! };
  }

  it('grey (1 channel) becomes an RGB JPEG with equal channels', async () => {
    const src = await photoRaw(W, H);
    const grey = await fromRaw(src).toColourspace('b-w').png().toBuffer();
    expect((await sharp(grey).metadata()).channels).toBe(1);
    const greyRaw = await sharp(grey).toColourspace('srgb').raw().toBuffer();
    const { back, ext, channels } = await upscaleBack(grey, 'grey.png');
    expect([ext, channels]).toEqual(['jpg', 3]);
    expect(psnr(back.data, greyRaw)).toBeGreaterThan(27);
    const [r, g, b] = channelMeans(back);
    expect(Math.abs(r! - g!)).toBeLessThan(1.5);
    expect(Math.abs(b! - g!)).toBeLessThan(1.5);
  });

  it('grey + alpha becomes an RGBA PNG', async () => {
    const src = await cutoutRaw(W);
    const ga = await fromRaw(src).toColourspace('b-w').png().toBuffer();
    const meta = await sharp(ga).metadata();
    expect([meta.channels, meta.hasAlpha]).toEqual([2, true]);
    const { result } = await runOp('upscale', { image: bufferInput('ga.png', ga) }, { scale: 2, ...SLIM });
    const out = await sharp(result.data!).metadata();
    expect([result.ext, out.format, out.channels, out.width]).toEqual(['png', 'png', 4, W * 2]);
  });

  it('palette PNG: opaque gives JPEG, with a transparent entry gives PNG; colours kept', async () => {
    const src = await photoRaw(W, H);
    const pal = await fromRaw(src).png({ palette: true }).toBuffer();
    expect(paletteBits(await sharp(pal).metadata())).toBe(8);
    const palRgb = await sharp(pal).raw().toBuffer();
    const opaque = await upscaleBack(pal, 'pal.png');
    expect(opaque.ext).toBe('jpg');
    expect(psnr(opaque.back.data, palRgb)).toBeGreaterThan(25);

    const cut = await cutoutRaw(W);
    const palA = await fromRaw(cut).png({ palette: true }).toBuffer();
    const m = await sharp(palA).metadata();
    expect([paletteBits(m), m.hasAlpha]).toEqual([8, true]);
    const { result } = await runOp('upscale', { image: bufferInput('palA.png', palA) }, { scale: 2, ...SLIM });
    expect(result.ext).toBe('png');
    const corner = await decode(result.data!);
    expect(corner.data[3]).toBe(0); // the cut-out's corner is transparent
  });

  it('16-bit PNG and CMYK JPEG decode to the same sRGB picture', async () => {
    const src = await photoRaw(W, H);
    const png16 = await fromRaw(src).toColourspace('rgb16').png().toBuffer();
    expect((await sharp(png16).metadata()).depth).toBe('ushort');
    expect(psnr((await upscaleBack(png16, 'deep.png')).back.data, src.data)).toBeGreaterThan(27);

    const cmyk = await fromRaw(src).toColourspace('cmyk').jpeg({ quality: 95 }).toBuffer();
    expect((await sharp(cmyk).metadata()).space).toBe('cmyk');
    const back = (await upscaleBack(cmyk, 'cmyk.jpg')).back;
    const ref = await sharp(cmyk).toColourspace('srgb').raw().toBuffer();
    expect(psnr(back.data, ref)).toBeGreaterThan(27);
  });

  it('an ICC-tagged (Display P3) input is converted to sRGB, not reinterpreted', async () => {
    const src = await photoRaw(W, H);
    const p3 = await fromRaw(src).withIccProfile('p3').png().toBuffer();
    const asStored = await sharp(p3, { ignoreIcc: true }).raw().toBuffer();
    const { back } = await upscaleBack(p3, 'p3.png');
    const out = channelMeans(back);
    const want = channelMeans(src);
    const stored = channelMeans({ ...src, data: asStored });
    // The stored P3 numbers differ clearly from the sRGB ones, so this can tell the two apart.
    expect(Math.max(...stored.map((v, i) => Math.abs(v - want[i]!)))).toBeGreaterThan(4);
    expect(Math.max(...out.map((v, i) => Math.abs(v - want[i]!)))).toBeLessThan(1.5);
    expect(psnr(back.data, src.data)).toBeGreaterThan(psnr(back.data, asStored) + 3);
  });

  it('EXIF orientation is applied: a 80x64 JPEG tagged "rotate 90" comes out 128x160, upright', async () => {
    const src = await photoRaw(W, H);
    const tagged = await fromRaw(src).jpeg({ quality: 95 }).withMetadata({ orientation: 6 }).toBuffer();
    const upright = await fromRaw(src).rotate(90).raw().toBuffer();
    const { result } = await runOp('upscale', { image: bufferInput('rot.jpg', tagged) }, { scale: 2, ...SLIM });
    const meta = await sharp(result.data!).metadata();
    // The input's EXIF is kept with Orientation reset to 1, since the pixels are already upright.
    expect([meta.width, meta.height, meta.orientation]).toEqual([H * 2, W * 2, 1]);
    const back = await shrinkRgb(result.data!, H, W);
    expect(psnr(back.data, upright)).toBeGreaterThan(27);
  });
});

describe('upscale: tiling leaves no seam', () => {
  it('the pipeline (default 192 px tiles, 2x2 tiles here) equals one whole-image run plus the same back-projection', async () => {
    const src = await photoRaw(240, 200, 'images/astronaut.png');
    // An opaque alpha channel makes the output a lossless PNG, so pixels compare exactly.
    const rgba = await fromRaw(src).ensureAlpha(1).png().toBuffer();
    const { result, progress } = await runOp('upscale', { image: bufferInput('a.png', rgba) }, { scale: 2, ...SLIM });
    expect(progress.filter((p) => p.unit === 'tiles').at(-1)).toMatchObject({ done: 4, total: 4 });
    const tiled = await decode(result.data!);
    const whole = await upscaleRgb({ data: src.data, width: 240, height: 200 }, { model: 'slim', scale: 2, tile: 256 });
    await backProject(whole.data, 480, 400, src.data, 240, 200);
    let max = 0;
    let sum = 0;
    for (let p = 0; p < 480 * 400; p++) {
      for (let c = 0; c < 3; c++) {
        const d = Math.abs(tiled.data[p * 4 + c]! - whole.data[p * 3 + c]!);
        max = Math.max(max, d);
        sum += d;
      }
    }
    // Tiling alone stays within 1/255 (next test); back-projection's rounding can carry such a
    // step through its shrink/enlarge passes to at most 3/255, far below a visible seam.
    expect(max).toBeLessThanOrEqual(3);
    console.log(`pipeline tiled vs whole: max ${max}/255, mean ${(sum / (480 * 400 * 3)).toFixed(4)}`);
    expect(sum / (480 * 400 * 3)).toBeLessThan(0.01);
  });

  it('small tiles at 4x (3x2 tiles of 64 px) match the whole image within 1/255', async () => {
    const src = await photoRaw(150, 110, 'images/baboon.jpg');
    const whole = await upscaleRgb({ data: src.data, width: 150, height: 110 }, { model: 'slim', scale: 4, tile: 256 });
    const tiled = await upscaleRgb({ data: src.data, width: 150, height: 110 }, { model: 'slim', scale: 4, tile: 64 });
    let max = 0;
    for (let i = 0; i < whole.data.length; i++) max = Math.max(max, Math.abs(whole.data[i]! - tiled.data[i]!));
    expect(max).toBeLessThanOrEqual(1);
  });
});

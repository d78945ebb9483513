import { describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { bufferInput, fixture, runOp } from '../../helpers.js';
import { DEFAULT_GROUND, findHorizon, groundFor, loadBackdrop } from '../../../src/ops/generate-background/backdrop.js';
import { plainTexture, skyOver } from './backdrops.js';
import { luma, rgbOf } from './stats.js';

const SIZE = 1024;
const handbag = fixture('cutouts/handbag.png');

/** Mean Rec.709 luma of a rectangle of a packed RGB canvas. */
function meanLuma(img: { data: Buffer; width: number }, x0: number, y0: number, x1: number, y1: number): number {
  let s = 0,
    n = 0;
  for (let y = y0; y < y1; y++)
    for (let x = x0; x < x1; x++) {
      s += luma(img.data, y * img.width + x);
      n++;
    }
  return s / n;
}

describe('generate-background --background-image: ground line', () => {
  it('finds a clear horizon where it is, and none on a texture without one', async () => {
    for (const at of [0.4, 0.55, 0.7]) {
      const photo = await skyOver('grass.png', at, 256);
      const raw = await sharp(photo).raw().toBuffer();
      expect(findHorizon({ data: raw, width: 256, height: 256, channels: 3 })).toBeCloseTo(at, 1);
    }
    for (const t of ['grass.png', 'gravel.png']) {
      const raw = await sharp(await plainTexture(t, 256))
        .raw()
        .toBuffer();
      expect(findHorizon({ data: raw, width: 256, height: 256, channels: 3 })).toBeNull();
    }
    expect(groundFor(null)).toBe(DEFAULT_GROUND);
    // The subject stands in front of the edge, on the ground, not on the line itself.
    expect(groundFor(0.45)).toBeGreaterThan(0.45 + 0.06);
  });

  it('stands the subject on the estimated ground line of a photo with a clear horizon, with a shadow under it', async () => {
    const photo = await skyOver('grass.png', 0.45);
    const { result, warnings } = await runOp('generate-background', { image: handbag, background: bufferInput('beach.jpg', photo) }, {});
    expect(warnings).toEqual([]);
    const meta = result.meta as {
      horizon: number;
      ground_line: number;
      subject_box: { x0: number; y0: number; x1: number; y1: number };
      scene: string;
      background_image: string;
    };
    expect(meta.scene).toBe('background_image');
    expect(meta.background_image).toBe('beach.jpg');
    expect(Math.abs(meta.horizon - 0.45)).toBeLessThan(0.02);
    expect(Math.abs(meta.ground_line - groundFor(meta.horizon))).toBeLessThan(0.002);
    const box = meta.subject_box;
    // Its lowest row on the ground line, below the horizon, with room above.
    expect(Math.abs(box.y1 - Math.round(meta.ground_line * SIZE))).toBeLessThanOrEqual(2);
    expect(box.y0).toBeGreaterThan(0);
    const out = await rgbOf(result.data!);
    expect([out.width, out.height]).toEqual([SIZE, SIZE]);
    // The photo is the backdrop: blue sky in the upper corners.
    for (const x of [8, SIZE - 40]) {
      const i = (20 * SIZE + x) * 3;
      expect(out.data[i + 2]!).toBeGreaterThan(out.data[i]! + 60);
    }
    // A contact shadow: the band just under the base is darker than the photo there.
    const bg = await sharp(photo).resize(SIZE, SIZE).raw().toBuffer();
    const cx0 = box.x0 + Math.round((box.x1 - box.x0) * 0.25),
      cx1 = box.x1 - Math.round((box.x1 - box.x0) * 0.25);
    const under = meanLuma(out, cx0, box.y1 + 2, cx1, box.y1 + 14);
    const before = meanLuma({ data: bg, width: SIZE }, cx0, box.y1 + 2, cx1, box.y1 + 14);
    expect(under).toBeLessThan(before * 0.85);
  }, 60_000);

  it('casts the shadow away from the side the photo is lit from', async () => {
    // Gravel lit from the right: brightness rising left to right.
    const size = 640;
    const raw = await sharp(await plainTexture('gravel.png', size))
      .raw()
      .toBuffer();
    for (let y = 0; y < size; y++)
      for (let x = 0; x < size; x++)
        for (let c = 0; c < 3; c++) raw[(y * size + x) * 3 + c] = Math.round(raw[(y * size + x) * 3 + c]! * (0.45 + 0.75 * (x / size)));
    const photo = await sharp(raw, { raw: { width: size, height: size, channels: 3 } })
      .jpeg()
      .toBuffer();
    const { result } = await runOp('generate-background', { image: handbag, background: bufferInput('lit.jpg', photo) }, {});
    const meta = result.meta as { light: { azimuth: number; estimated: boolean }; subject_box: { x0: number; y0: number; x1: number; y1: number } };
    expect(meta.light.estimated).toBe(true);
    expect(meta.light.azimuth).toBeGreaterThan(20);
    const backdrop = await loadBackdrop(bufferInput('lit.jpg', photo), SIZE);
    const out = await rgbOf(result.data!);
    const b = meta.subject_box;
    const w = b.x1 - b.x0;
    // Darkening beside the subject's lower part, left versus right.
    const darkening = (x0: number, x1: number) =>
      meanLuma({ data: backdrop.rgb, width: SIZE }, x0, b.y1 - 30, x1, b.y1 + 6) - meanLuma(out, x0, b.y1 - 30, x1, b.y1 + 6);
    const left = darkening(Math.max(0, b.x0 - Math.round(w * 0.4)), b.x0 - 2);
    const right = darkening(b.x1 + 2, Math.min(SIZE, b.x1 + Math.round(w * 0.4)));
    expect(left).toBeGreaterThan(right + 3);
  }, 60_000);

  it('uses the default ground line (80%) when the photo has no horizontal edge', async () => {
    const { result } = await runOp('generate-background', { image: handbag, background: bufferInput('lawn.jpg', await plainTexture('grass.png')) }, {});
    const meta = result.meta as { horizon: null; ground_line: number; subject_box: { y1: number } };
    expect(meta.horizon).toBeNull();
    expect(meta.ground_line).toBe(DEFAULT_GROUND);
    expect(Math.abs(meta.subject_box.y1 - DEFAULT_GROUND * SIZE)).toBeLessThanOrEqual(2);
  }, 60_000);

  it('honours image_transform: scale and x_center; a y_center other than 0.5 places the subject by hand', async () => {
    const photo = await skyOver('grass.png', 0.45);
    const a = await runOp(
      'generate-background',
      { image: handbag, background: bufferInput('b.jpg', photo) },
      { image_transform: { scale: 0.3, x_center: 0.25 } },
    );
    const box = (a.result.meta as { subject_box: { x0: number; x1: number; y0: number; y1: number } }).subject_box;
    expect(Math.abs((box.x0 + box.x1) / 2 - 0.25 * SIZE)).toBeLessThan(SIZE * 0.03);
    expect(box.x1 - box.x0).toBeLessThan(SIZE * 0.31);
    const b = await runOp(
      'generate-background',
      { image: handbag, background: bufferInput('b.jpg', photo) },
      { image_transform: { scale: 0.3, y_center: 0.3 } },
    );
    const hand = (b.result.meta as { subject_box: { y0: number; y1: number } }).subject_box;
    expect(Math.abs((hand.y0 + hand.y1) / 2 - 0.3 * SIZE)).toBeLessThan(SIZE * 0.03);
  }, 60_000);

  it('says that scene, prompt and seed are ignored when a background image is given', async () => {
    const photo = await skyOver('grass.png', 0.5);
    const { result, warnings } = await runOp(
      'generate-background',
      { image: handbag, background: bufferInput('b.jpg', photo) },
      { scene: 'wood', prompt: 'on a beach', seed: 3 },
    );
    expect(warnings.join('\n')).toMatch(/background image was given, so scene, prompt, seed are ignored/);
    expect((result.meta as { ignored_options: string[] }).ignored_options).toEqual(['scene', 'prompt', 'seed']);
  }, 60_000);

  it('grades the subject to the photo light: a warm photo warms it, a dark one darkens it', async () => {
    const warm = await skyOver('gravel.png', 0.5, 640, [200, 110, 40]);
    const { result } = await runOp('generate-background', { image: handbag, background: bufferInput('sunset.jpg', warm) }, {});
    const [r, , b] = (result.meta as { subject_grade: number[] }).subject_grade;
    expect(r!).toBeGreaterThan(b! + 0.1);
    const dark = await sharp(warm).linear(0.25, 0).jpeg().toBuffer();
    const d = await runOp('generate-background', { image: handbag, background: bufferInput('night.jpg', dark) }, {});
    const g = (d.result.meta as { subject_grade: number[] }).subject_grade;
    expect(Math.max(...g)).toBeLessThan(Math.min(r!, b!));
  }, 60_000);

  it('softens a sharp photo away from the ground line and keeps it sharp at the base', async () => {
    const photo = await skyOver('gravel.png', 0.3);
    const backdrop = await loadBackdrop(bufferInput('b.jpg', photo), SIZE);
    expect(backdrop.defocus).toBeGreaterThan(0);
    const plain = await sharp(photo).resize(SIZE, SIZE, { fit: 'cover', kernel: 'lanczos3' }).raw().toBuffer();
    const detail = (buf: Buffer, y0: number, y1: number) => {
      let s = 0,
        n = 0;
      for (let y = y0; y < y1; y++)
        for (let x = 1; x < SIZE - 1; x++) {
          const i = (y * SIZE + x) * 3 + 1;
          s += Math.abs(2 * buf[i]! - buf[i - 3]! - buf[i + 3]!);
          n++;
        }
      return s / n;
    };
    const g = Math.round(backdrop.analysis.ground * SIZE);
    // The foreground far below the base loses detail; the ground at the base keeps it.
    const far = [Math.min(SIZE - 40, g + 300), Math.min(SIZE - 8, g + 340)] as const;
    if (far[0] > g + 200) expect(detail(backdrop.rgb, far[0], far[1])).toBeLessThan(detail(plain, far[0], far[1]) * 0.7);
    // Above the ground line, towards the far gravel beyond the horizon.
    expect(detail(backdrop.rgb, g - 330, g - 300)).toBeLessThan(detail(plain, g - 330, g - 300) * 0.7);
    expect(detail(backdrop.rgb, g - 4, g + 4)).toBeGreaterThan(detail(plain, g - 4, g + 4) * 0.9);
  }, 60_000);

  it('refuses a bad background file with the spec error codes, naming it as the background image', async () => {
    const run = (data: Buffer) => runOp('generate-background', { image: handbag, background: bufferInput('bg.jpg', data) }, {});
    await expect(run(Buffer.from('not an image at all'))).rejects.toMatchObject({
      code: 'invalid_image',
      message: expect.stringMatching(/^background image bg\.jpg/),
    });
    const tiny = await sharp({ create: { width: 32, height: 32, channels: 3, background: '#888' } })
      .png()
      .toBuffer();
    await expect(run(tiny)).rejects.toMatchObject({ code: 'image_too_small' });
  }, 60_000);
});

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { encodeImage } from '../../../src/media/image.js';
import { bufferInput, fixture, runOp, tempDir, type RunOutcome } from '../../helpers.js';

const PERSON = fixture('images/astronaut.png');
const TSHIRT = fixture('cutouts/tshirt.png');
const DRESS = fixture('cutouts/dress.png');
const SLOW = 180_000;

interface Rgb {
  data: Buffer;
  width: number;
  height: number;
}

async function rgbOf(src: string | Buffer): Promise<Rgb> {
  const { data, info } = await sharp(src).flatten({ background: '#ffffff' }).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

/** Hue in degrees and HSV saturation. */
function hueSat(r: number, g: number, b: number): [number, number] {
  const max = Math.max(r, g, b),
    min = Math.min(r, g, b),
    d = max - min;
  if (!max || !d) return [0, 0];
  let h = max === r ? ((g - b) / d) % 6 : max === g ? (b - r) / d + 2 : (r - g) / d + 4;
  h *= 60;
  return [h < 0 ? h + 360 : h, d / max];
}

/** Circular mean hue of the saturated opaque pixels of a garment cut-out. */
async function dominantHue(path: string): Promise<number> {
  const { data, info } = await sharp(path).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  let sx = 0,
    sy = 0;
  for (let i = 0; i < info.width * info.height; i++) {
    if (data[i * 4 + 3]! < 200) continue;
    const [h, s] = hueSat(data[i * 4]!, data[i * 4 + 1]!, data[i * 4 + 2]!);
    if (s < 0.25) continue;
    sx += Math.cos((h * Math.PI) / 180);
    sy += Math.sin((h * Math.PI) / 180);
  }
  const h = (Math.atan2(sy, sx) * 180) / Math.PI;
  return h < 0 ? h + 360 : h;
}

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** Share of a box's pixels within 35 degrees of a hue (saturation >= 0.25). */
function hueShare(img: Rgb, box: Box, hue: number): number {
  let hit = 0,
    n = 0;
  for (let y = box.y; y < box.y + box.height; y++) {
    for (let x = box.x; x < box.x + box.width; x++) {
      const i = (y * img.width + x) * 3;
      const [h, s] = hueSat(img.data[i]!, img.data[i + 1]!, img.data[i + 2]!);
      const d = Math.min(Math.abs(h - hue), 360 - Math.abs(h - hue));
      if (s >= 0.25 && d <= 35) hit++;
      n++;
    }
  }
  return hit / n;
}

/** Per-pixel max channel difference for pixels selected by `keep`. */
function diffs(a: Rgb, b: Rgb, keep: (x: number, y: number) => boolean): number[] {
  const out: number[] = [];
  for (let y = 0; y < a.height; y++) {
    for (let x = 0; x < a.width; x++) {
      if (!keep(x, y)) continue;
      const i = (y * a.width + x) * 3;
      out.push(Math.max(Math.abs(a.data[i]! - b.data[i]!), Math.abs(a.data[i + 1]! - b.data[i + 1]!), Math.abs(a.data[i + 2]! - b.data[i + 2]!)));
    }
  }
  return out;
}

const mean = (v: number[]) => v.reduce((s, x) => s + x, 0) / v.length;
const inBox = (b: Box, x: number, y: number) => x >= b.x && x < b.x + b.width && y >= b.y && y < b.y + b.height;

/** Whether the 8x8 JPEG block holding (x, y) overlaps the box: blocks that do not are coded identically. */
function blockTouches(b: Box, x: number, y: number): boolean {
  const bx = x & ~7,
    by = y & ~7;
  return bx < b.x + b.width && bx + 8 > b.x && by < b.y + b.height && by + 8 > b.y;
}

/** The input through the same JPEG encoder the pipeline uses. */
async function inputAsJpeg(img: Rgb): Promise<Rgb> {
  return rgbOf(await encodeImage({ data: img.data, width: img.width, height: img.height, channels: 3 }, 'jpeg'));
}

/** The central torso: the middle 60% of the shoulders, from below the shoulder line down. */
function torsoBox(meta: Record<string, any>, img: Rgb): Box {
  const b = meta.body;
  const y = Math.round(b.shoulder_y + 0.25 * b.shoulder_width);
  return { x: Math.round(b.center_x - 0.3 * b.shoulder_width), y, width: Math.round(0.6 * b.shoulder_width), height: img.height - y };
}

describe('try-on (local pipeline)', () => {
  let input: Rgb;
  let tshirt: RunOutcome, dress: RunOutcome, worn: RunOutcome;

  beforeAll(async () => {
    input = await rgbOf(PERSON);
    // The three runs share the machine; run them one after another.
    tshirt = await runOp('try-on', { person: PERSON, garment: TSHIRT }, { garment_mode: 'upper' });
    dress = await runOp('try-on', { person: PERSON, garment: DRESS }, { remove_background: true });
    // A garment photo that shows a person: the T-shirt composited over the astronaut's torso.
    const dir = tempDir('imgtool-tryon-');
    const shirt = await sharp(TSHIRT).resize(300, 300).toBuffer();
    const photo = await sharp(PERSON)
      .composite([{ input: shirt, left: 70, top: 195 }])
      .png()
      .toBuffer();
    const path = join(dir, 'worn.png');
    writeFileSync(path, photo);
    worn = await runOp('try-on', { person: PERSON, garment: path });
  }, SLOW);

  it('writes a JPEG the size of the person image and charges 3 credits for a clean garment', async () => {
    const meta = await sharp(tshirt.result.data!).metadata();
    expect(tshirt.result.ext).toBe('jpg');
    expect(tshirt.result.contentType).toBe('image/jpeg');
    expect(meta.format).toBe('jpeg');
    expect([meta.width, meta.height]).toEqual([input.width, input.height]);
    expect(tshirt.result.credits).toBe(3);
    expect(tshirt.result.meta?.extracted).toBe(false);
    expect(tshirt.progress.at(-1)?.fraction).toBe(1);
  });

  it('warns that garment_mode is deprecated and detects the kind itself', () => {
    expect(tshirt.warnings.join('\n')).toMatch(/garment_mode is deprecated/);
    expect(tshirt.result.meta?.garment_kind).toBe('top');
    expect(dress.result.meta?.garment_kind).toBe('full');
    expect(dress.warnings).toEqual([]);
  });

  it('leaves everything outside the garment region exactly as it was', async () => {
    const out = await rgbOf(tshirt.result.data!);
    const ref = await inputAsJpeg(input);
    const region = tshirt.result.meta!.region as Box;
    expect(region.width * region.height).toBeLessThan(0.8 * input.width * input.height);
    // Same encoder, same 8x8 blocks: every block away from the garment decodes bit-identically.
    const outside = diffs(out, ref, (x, y) => !blockTouches(region, x, y));
    expect(outside.length).toBeGreaterThan(0.2 * input.width * input.height);
    expect(outside.reduce((m, v) => Math.max(m, v), 0)).toBe(0);
    // And the garment really changed the region.
    expect(mean(diffs(out, ref, (x, y) => inBox(region, x, y)))).toBeGreaterThan(20);
    const face = tshirt.result.meta!.face as Box;
    expect(face).toBeTruthy();
    expect(blockTouches(region, face.x + face.width / 2, face.y + face.height / 2)).toBe(false);
  });

  it("covers the torso with the garment's dominant colour", async () => {
    const green = await dominantHue(TSHIRT);
    const out = await rgbOf(tshirt.result.data!);
    const torso = torsoBox(tshirt.result.meta!, out);
    expect(hueShare(input, torso, green)).toBeLessThan(0.1);
    expect(hueShare(out, torso, green)).toBeGreaterThan(0.5);

    const blue = await dominantHue(DRESS);
    const outDress = await rgbOf(dress.result.data!);
    expect(hueShare(input, torsoBox(dress.result.meta!, outDress), blue)).toBeLessThan(0.1);
    expect(hueShare(outDress, torsoBox(dress.result.meta!, outDress), blue)).toBeGreaterThan(0.5);
  });

  it('remove_background puts the person on white and keeps the face', async () => {
    const out = await rgbOf(dress.result.data!);
    // The top corners are flag and backdrop in the input.
    for (const [x0, y0] of [
      [0, 0],
      [out.width - 40, 0],
    ]) {
      const corner = diffs(out, { ...out, data: Buffer.alloc(out.data.length, 255) }, (x, y) => x >= x0 && x < x0 + 40 && y >= y0 && y < y0 + 40);
      expect(mean(corner)).toBeLessThan(6);
    }
    // Blocks inside the face are opaque in the cut-out: coded exactly as the input's.
    const ref = await inputAsJpeg(input);
    const face = dress.result.meta!.face as Box;
    const inner = { x: face.x + face.width * 0.25, y: face.y + face.height * 0.35, width: face.width * 0.5, height: face.height * 0.45 };
    const inside = (x: number, y: number) => inBox(inner, x & ~7, y & ~7) && inBox(inner, (x & ~7) + 7, (y & ~7) + 7);
    const faceDiff = diffs(out, ref, inside);
    expect(faceDiff.length).toBeGreaterThan(500);
    expect(faceDiff.reduce((m, v) => Math.max(m, v), 0)).toBe(0);
  });

  it('detects a garment photographed on a person, extracts it and charges +5', async () => {
    expect(worn.result.meta?.extracted).toBe(true);
    expect(worn.result.credits).toBe(8);
    expect((worn.result.meta!.extraction_reasons as string[]).join(' ')).toMatch(/face|skin/);
    expect(worn.result.meta?.garment_kind).toBe('top');
    const green = await dominantHue(TSHIRT);
    const out = await rgbOf(worn.result.data!);
    expect(hueShare(out, torsoBox(worn.result.meta!, out), green)).toBeGreaterThan(0.4);
  });
});

describe('try-on input errors', () => {
  it('names the missing person image', async () => {
    await expect(runOp('try-on', { garment: TSHIRT })).rejects.toMatchObject({ code: 'invalid_parameter', message: expect.stringMatching(/person image/) });
  });

  it('rejects a 63 px person or garment with image_too_small', async () => {
    const tiny = await sharp(PERSON).resize(63, 63).png().toBuffer();
    await expect(runOp('try-on', { person: bufferInput('tiny.png', tiny), garment: TSHIRT })).rejects.toMatchObject({
      code: 'image_too_small',
      message: expect.stringMatching(/tiny\.png is 63x63.*64x64/),
    });
    await expect(runOp('try-on', { person: PERSON, garment: bufferInput('tiny.png', tiny) })).rejects.toMatchObject({ code: 'image_too_small' });
  });

  it('rejects an undecodable garment and an invalid option', async () => {
    await expect(runOp('try-on', { person: PERSON, garment: bufferInput('x.jpg', Buffer.from('not an image')) })).rejects.toMatchObject({
      code: 'invalid_image',
    });
    await expect(runOp('try-on', { person: PERSON, garment: TSHIRT }, { garment_mode: 'sideways' })).rejects.toMatchObject({
      code: 'invalid_parameter',
      message: expect.stringMatching(/garment_mode/),
    });
  });

  it('stops with job_cancelled when the signal has fired', async () => {
    const ac = new AbortController();
    ac.abort();
    await expect(runOp('try-on', { person: PERSON, garment: TSHIRT }, {}, ac.signal)).rejects.toMatchObject({ code: 'job_cancelled' });
  });
});

import { describe, expect, it } from 'vitest';
import { DEFAULT_FRAME_PAD, framePadColour, paddedMask, usePadded } from '../../../src/vision/cutout/frame-pad.js';

// The frame pad's decisions (frame-pad.ts); the real-model cases are in
// test/ops/remove-background/framing.test.ts (a basketball cut by three borders, chopsticks on a sweep).
const W = 240,
  H = 180;
type RGB = [number, number, number];
const PINK: RGB = [200, 160, 170];

function image(paint: (x: number, y: number) => RGB | undefined, backdrop: (x: number, y: number) => RGB = () => PINK) {
  const data = new Uint8Array(W * H * 3);
  for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) data.set(paint(x, y) ?? backdrop(x, y), (y * W + x) * 3);
  return { data, width: W, height: H, channels: 3 as const };
}
function maskOf(v: (x: number, y: number) => boolean): Uint8Array {
  const m = new Uint8Array(W * H);
  for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) m[y * W + x] = v(x, y) ? 255 : 0;
  return m;
}
// A blue camera body filling the bottom of the frame, cut by the left, right and bottom borders;
// the model's first look saw only its lens.
const body = (_x: number, y: number) => y >= 90;
const lens = (x: number, y: number) => (x - 120) ** 2 + (y - 130) ** 2 <= 30 * 30;
const camera = image((x, y) => (lens(x, y) ? [60, 60, 70] : body(x, y) ? [70, 90, 160] : undefined));
const lensOnly = maskOf(lens);

describe('frame pad (issue 32): a second look at a subject cut by the frame on a plain backdrop', () => {
  it('takes the look on a plain backdrop when something else reaches the frame, with the backdrop colour', () => {
    const colour = framePadColour(lensOnly, camera, W, H);
    expect(colour).toEqual(PINK);
  });

  it('does not when nothing but the backdrop reaches the frame', () => {
    const inside = image((x, y) => (lens(x, y) ? [60, 60, 70] : undefined));
    expect(framePadColour(lensOnly, inside, W, H)).toBeUndefined();
  });

  it('does not on a busy backdrop (gravel-like texture)', () => {
    // A fixed pseudo-random grey per pixel, 90..209.
    const gravel = (x: number, y: number): RGB => {
      const v = 90 + ((((x * 73856093) ^ (y * 19349663)) >>> 0) % 120);
      return [v, v, v - 10];
    };
    const busy = image((x, y) => (lens(x, y) ? [60, 60, 70] : body(x, y) ? [70, 90, 160] : undefined), gravel);
    expect(framePadColour(lensOnly, busy, W, H)).toBeUndefined();
    // The same scene on its plain backdrop takes the look (the texture is what turns it off).
    expect(framePadColour(lensOnly, camera, W, H)).toBeDefined();
  });

  it('sets the image on a canvas of the colour, pad of the longer side wide, and crops the mask back', async () => {
    const seen: Array<{ width: number; height: number; corner: number[]; centre: number[] }> = [];
    // A segmenter that calls "subject" whatever is not the canvas colour: on the wide canvas the
    // camera's body is then found whole.
    const segment = async (img: { data: Uint8Array; width: number; height: number }) => {
      const c = (i: number) => [...img.data.subarray(i * 3, i * 3 + 3)];
      seen.push({ width: img.width, height: img.height, corner: c(0), centre: c((img.height >> 1) * img.width + (img.width >> 1)) });
      const m = new Uint8Array(img.width * img.height);
      for (let i = 0; i < m.length; i++) m[i] = c(i).join() === PINK.join() ? 0 : 255;
      return m;
    };
    const out = await paddedMask(camera, PINK, segment);
    const m = Math.round(DEFAULT_FRAME_PAD.pad * W);
    expect(seen).toEqual([
      {
        width: W + 2 * m,
        height: H + 2 * m,
        corner: PINK,
        centre: [...camera.data.subarray(((H >> 1) * W + (W >> 1)) * 3, ((H >> 1) * W + (W >> 1)) * 3 + 3)],
      },
    ]);
    expect(out).toEqual(maskOf((x, y) => body(x, y) || lens(x, y)));
  });

  it('uses the padded look where it sees more than the first', () => {
    const whole = maskOf((x, y) => body(x, y) || lens(x, y));
    expect(usePadded(lensOnly, whole, camera.data, W, H, PINK)).toBe(true);
  });

  it('keeps the first look where the two agree', () => {
    const almost = maskOf((x, y) => lens(x, y) && x > 92);
    expect(usePadded(lensOnly, almost, camera.data, W, H, PINK)).toBe(false);
  });

  it('keeps the first look where the padded one took the whole photo (the canvas seam)', () => {
    const all = maskOf(() => true);
    expect(usePadded(lensOnly, all, camera.data, W, H, PINK)).toBe(false);
    // The same with the canvas check off: it would be used.
    expect(usePadded(lensOnly, all, camera.data, W, H, PINK, { ...DEFAULT_FRAME_PAD, seenCanvas: 1 })).toBe(true);
  });
});

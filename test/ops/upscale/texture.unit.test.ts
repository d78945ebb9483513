// Texture restoration (texture.ts) on hand-made images where the answer is known: a stand-in
// "model output" that flattened a random texture, kept a step edge crisp and removed faint
// noise, as Real-ESRGAN does at 4x.
import { describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { restoreTexture } from '../../../src/ops/upscale/texture.js';

const W = 64;
const H = 64;
const S = 4;

/** Deterministic pseudo-random numbers in [0, 1) (mulberry32). */
function rng(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Input: columns 0-23 a random grey texture (+-30 around 128), 24-39 faint noise (+-1) around
 * 100, 40-63 a step from 40 to 200 at column 52. Model output: the texture and the noise
 * flattened to their means, the step enlarged crisp (nearest neighbour).
 */
function scene() {
  const r = rng(7);
  const input = new Uint8Array(W * H * 3);
  const model = new Uint8Array(W * S * H * S * 3);
  const flatOf = (x: number) => (x < 24 ? 128 : x < 40 ? 100 : x < 52 ? 40 : 200);
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++) {
      const v = x < 24 ? 128 + Math.round((r() - 0.5) * 60) : x < 40 ? 100 + Math.round((r() - 0.5) * 2) : flatOf(x);
      input.fill(v, (y * W + x) * 3, (y * W + x) * 3 + 3);
    }
  for (let y = 0; y < H * S; y++) for (let x = 0; x < W * S; x++) model.fill(flatOf(Math.floor(x / S)), (y * W * S + x) * 3, (y * W * S + x) * 3 + 3);
  return { input, model };
}

/** Mean luma gradient magnitude over output columns [x0, x1) (rows away from the border). */
function gradient(rgb: Uint8Array, x0: number, x1: number): number {
  const w = W * S;
  const at = (x: number, y: number) => rgb[(y * w + x) * 3]!;
  let sum = 0;
  let n = 0;
  for (let y = 8; y < H * S - 8; y++)
    for (let x = x0; x < x1; x++) {
      sum += Math.hypot(at(x + 1, y) - at(x - 1, y), at(x, y + 1) - at(x, y - 1)) / 2;
      n++;
    }
  return sum / n;
}

const run = async (strength: number, model = scene().model) => {
  const { input } = scene();
  const out = Uint8Array.from(model);
  await restoreTexture(out, W * S, H * S, input, W, H, { strength });
  return out;
};

describe('restoreTexture', () => {
  it('gives a flattened texture back its grain from the input, more with more strength', async () => {
    const { input, model } = scene();
    // What the input's texture looks like enlarged (the ceiling for a band taken from the input).
    const lanczos = new Uint8Array(
      await sharp(input, { raw: { width: W, height: H, channels: 3 } })
        .resize(W * S, H * S, { kernel: 'lanczos3' })
        .raw()
        .toBuffer(),
    );
    const ceiling = gradient(lanczos, 16, 80);
    expect(gradient(model, 16, 80)).toBe(0);
    const half = gradient(await run(0.5), 16, 80);
    const full = gradient(await run(1), 16, 80);
    expect(half).toBeGreaterThan(0.3 * ceiling);
    expect(full).toBeGreaterThan(half * 1.5);
    expect(full).toBeLessThan(1.1 * ceiling); // the input's amplitude, not a sharpened one
  });

  it('leaves a crisp edge and faint noise to the model: no halo, no overshoot, no noise put back', async () => {
    const out = await run(1);
    const model = scene().model;
    let maxDiff = 0;
    // Output columns 112-255: the noise region's inner part and the step (input columns 28-63).
    for (let y = 0; y < H * S; y++)
      for (let x = 112; x < W * S; x++) {
        const i = (y * W * S + x) * 3;
        maxDiff = Math.max(maxDiff, Math.abs(out[i]! - model[i]!));
      }
    expect(maxDiff).toBeLessThanOrEqual(1);
  });

  it('adds only what the model lost: little where it kept the texture', async () => {
    const { input, model } = scene();
    // A "model" that kept the texture (the input enlarged with Lanczos3; shrunk back it has
    // most of the input's finest band, which resampling twice softens a little).
    const kept = new Uint8Array(
      await sharp(input, { raw: { width: W, height: H, channels: 3 } })
        .resize(W * S, H * S, { kernel: 'lanczos3' })
        .raw()
        .toBuffer(),
    );
    const change = (a: Uint8Array, b: Uint8Array) => {
      let sum = 0;
      for (let i = 0; i < a.length; i++) sum += Math.abs(a[i]! - b[i]!);
      return sum / a.length;
    };
    const onKept = change(await run(1, kept), kept);
    const onFlat = change(await run(1, model), model);
    expect(onFlat).toBeGreaterThan(2);
    expect(onKept).toBeLessThan(onFlat / 4);
  });

  it('strength 0 changes nothing, and the result is deterministic', async () => {
    expect(Buffer.compare(Buffer.from(await run(0)), Buffer.from(scene().model))).toBe(0);
    expect(Buffer.compare(Buffer.from(await run(0.75)), Buffer.from(await run(0.75)))).toBe(0);
  });
});

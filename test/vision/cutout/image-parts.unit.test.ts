import { describe, expect, it } from 'vitest';
import { DEFAULT_FUSION, fuseMasks, type FusionParams } from '../../../src/vision/cutout/fusion.js';
import { DEFAULT_IMAGE_PARTS, segmentGraph } from '../../../src/vision/cutout/image-parts.js';

const W = 200,
  H = 150;

/** A deterministic pseudo-random sequence (LCG), so the busy backdrop is the same on every run. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** RGB image: a backdrop of many small dark-green leaves (busy) or a flat grey wall. */
function backdrop(busy: boolean): Uint8Array {
  const img = new Uint8Array(W * H * 3);
  const rnd = random(7);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const i = (y * W + x) * 3;
      if (!busy) img.set([128, 128, 128], i);
    }
  }
  if (!busy) return img;
  // Blobs 2-4 px in dark greens: every few pixels a strong edge.
  for (let y = 0; y < H; y += 3) {
    for (let x = 0; x < W; x += 3) {
      const g = 40 + Math.floor(rnd() * 90);
      const c = [Math.floor(g * 0.4), g, Math.floor(g * 0.3)];
      for (let dy = 0; dy < 3 && y + dy < H; dy++) for (let dx = 0; dx < 3 && x + dx < W; dx++) img.set(c, ((y + dy) * W + x + dx) * 3);
    }
  }
  return img;
}

const inDisc = (x: number, y: number) => (x - 100) ** 2 + (y - 105) ** 2 <= 30 * 30;
/** The stem: a smooth lime bar rising from 2 px above the disc (the cut between balls and stem). */
const inStem = (x: number, y: number, top = 20) => x >= 94 && x < 108 && y >= top && y < 73;

/** Paints the red ball and the lime stem (a gentle vertical shading, as a 3D render has). */
function paint(img: Uint8Array, stemTop = 20): Uint8Array {
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const i = (y * W + x) * 3;
      if (inDisc(x, y)) img.set([220, 30, 80], i);
      else if (inStem(x, y, stemTop)) img.set([170 + ((y - stemTop) >> 3), 235, 60], i);
    }
  }
  return img;
}

/** Both models see the ball only (255), and give the stem nothing, as on the cherries over the plant. */
function ballMask(): Uint8Array {
  const m = new Uint8Array(W * H);
  for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) if (inDisc(x, y)) m[y * W + x] = 255;
  return m;
}

function stemKept(image: Uint8Array, params: FusionParams = DEFAULT_FUSION, stemTop = 20): number {
  const fused = fuseMasks({ primary: ballMask(), second: ballMask(), image: { data: image, channels: 3 }, width: W, height: H }, 'auto', params);
  let kept = 0,
    area = 0;
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      if (!inStem(x, y, stemTop)) continue;
      area++;
      if (fused.mask[y * W + x]! >= 128) kept++;
    }
  }
  return kept / area;
}

describe('remove-background: a part only the image shows (image-parts.ts)', () => {
  it('segments a smooth region as one, a busy texture into many', () => {
    const img = paint(backdrop(true));
    const rgb = Float32Array.from(img);
    const { labels } = segmentGraph(rgb, W, H, DEFAULT_IMAGE_PARTS.scale, DEFAULT_IMAGE_PARTS.minSize);
    expect(labels[40 * W + 100]).toBe(labels[70 * W + 100]); // the stem, top to bottom
    expect(labels[40 * W + 100]).not.toBe(labels[40 * W + 90]); // not the leaves beside it
  });

  it('keeps a smooth detached part right above the body amid a busy backdrop, which neither model sees', () => {
    const img = paint(backdrop(true));
    expect(stemKept(img)).toBeGreaterThan(0.9);
    // Without the rule the part is lost (the models give it nothing).
    expect(stemKept(img, { ...DEFAULT_FUSION, imageParts: undefined })).toBe(0);
  });

  it('leaves a smooth region on a smooth backdrop (a wall beside the subject) out', () => {
    expect(stemKept(paint(backdrop(false)))).toBe(0);
  });

  it('leaves a smooth region that runs out of the frame out (a backdrop object)', () => {
    expect(stemKept(paint(backdrop(true), 0), DEFAULT_FUSION, 0)).toBe(0);
  });

  it('changes nothing with one model (--model u2netp) or for --keep all', () => {
    const img = paint(backdrop(true));
    const one = fuseMasks({ primary: ballMask(), image: { data: img, channels: 3 }, width: W, height: H }, 'auto');
    expect(one.mask[40 * W + 100]).toBe(0);
    const all = fuseMasks({ primary: ballMask(), second: ballMask(), image: { data: img, channels: 3 }, width: W, height: H }, 'all');
    expect(all.mask[40 * W + 100]).toBe(0);
  });
});

import { describe, expect, it } from 'vitest';
import { DEFAULT_FUSION, fuseMasks } from '../../../src/vision/cutout/fusion.js';

const W = 200,
  H = 150;
const blank = () => new Uint8Array(W * H);
const inDisc = (x: number, y: number, cx: number, cy: number, r: number) => (x - cx) ** 2 + (y - cy) ** 2 <= r * r;

describe('remove-background fusion: one model sure of a whole object', () => {
  // Two shoes side by side; U2-Net-p is sure of both, ISNet sees only the right one (since round 11
  // a region ISNet is sure of is kept whatever U2-Net-p says, so the rule is about U2-Net-p's).
  function pair(edges: boolean) {
    const data = new Uint8Array(W * H * 3).fill(90);
    const a = blank();
    const b = blank();
    for (let y = 0; y < H; y++) {
      for (let x = 0; x < W; x++) {
        const i = y * W + x;
        const left = inDisc(x, y, 55, 75, 28);
        const right = inDisc(x, y, 145, 75, 28);
        if (left || right) {
          a[i] = 250;
          if (edges) data.set([235, 235, 250], i * 3);
        }
        if (right) b[i] = 255;
        else if (left) b[i] = 5; // the other model gives it nothing
      }
    }
    return { a, b, image: { data, channels: 3 } };
  }

  it('keeps it when its outline follows a strong image edge', () => {
    const { a, b, image } = pair(true);
    const { mask, parts } = fuseMasks({ primary: b, second: a, image, width: W, height: H });
    expect(mask[75 * W + 55]).toBeGreaterThanOrEqual(128);
    expect(mask[75 * W + 145]).toBeGreaterThanOrEqual(128);
    expect(parts).toHaveLength(2);
  });

  it('drops it when nothing in the image outlines it (a hallucinated region)', () => {
    const { a, b, image } = pair(false);
    const { mask, parts } = fuseMasks({ primary: b, second: a, image, width: W, height: H });
    expect(mask[75 * W + 55]).toBeLessThan(128);
    expect(mask[75 * W + 145]).toBeGreaterThanOrEqual(128);
    expect(parts).toHaveLength(1);
  });
});

describe('remove-background fusion: a large part near the body that one model is sure of', () => {
  // A trophy's plinth just below its cup: U2-Net-p is sure of it, ISNet gives it nothing, and
  // nothing in the flat image outlines it, so neither the support rule nor the sure-edge rule
  // keeps it.
  it('keeps it', () => {
    const data = new Uint8Array(W * H * 3).fill(90);
    const a = blank();
    const b = blank();
    for (let y = 0; y < H; y++) {
      for (let x = 0; x < W; x++) {
        const i = y * W + x;
        if (inDisc(x, y, 100, 50, 30)) a[i] = b[i] = 250; // the cup, both models
        if (x >= 75 && x < 125 && y >= 85 && y < 115) b[i] = 250; // the plinth, 5 px below: U2-Net-p's alone
      }
    }
    const image = { data, channels: 3 };
    const { mask, parts } = fuseMasks({ primary: a, second: b, image, width: W, height: H });
    expect(mask[100 * W + 100]).toBeGreaterThanOrEqual(128);
    expect(parts).toHaveLength(2);
    const off = fuseMasks({ primary: a, second: b, image, width: W, height: H }, 'auto', { ...DEFAULT_FUSION, nearSureShare: Infinity });
    expect(off.mask[100 * W + 100]).toBe(0);
  });
});

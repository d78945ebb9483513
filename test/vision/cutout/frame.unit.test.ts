import { describe, expect, it } from 'vitest';
import { colourEdges, DEFAULT_FRAME, frameCut, frameDistance } from '../../../src/vision/cutout/frame.js';
import { DEFAULT_FUSION, fuseMasks } from '../../../src/vision/cutout/fusion.js';

const W = 200,
  H = 150;
const blank = () => new Uint8Array(W * H);
const inDisc = (x: number, y: number, cx: number, cy: number, r: number) => (x - cx) ** 2 + (y - cy) ** 2 <= r * r;

/**
 * A photo with a large backdrop object running out of the frame (a band from the top edge to the
 * bottom edge, orange) and a product in front of it (a blue disc inside the band), over grey.
 */
function scene() {
  const data = new Uint8Array(W * H * 3).fill(90);
  const both = blank();
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const i = y * W + x;
      const band = x >= 40 && x < 160;
      const disc = inDisc(x, y, 100, 75, 30);
      if (disc) data.set([40, 80, 230], i * 3);
      else if (band) data.set([240, 150, 40], i * 3);
      // The models are saturated on the product, merely confident on the backdrop object they
      // merged in (on the bench set: 82-86% of a product's pixels at 255, 4-25% of an orange's).
      if (disc) both[i] = 255;
      else if (band) both[i] = 235;
    }
  }
  return { data, both };
}

describe('remove-background: backdrop objects cut by the frame', () => {
  it('the geodesic distance from the frame is small across a flat surface and jumps at a strong edge', () => {
    const { data, both } = scene();
    const inside = both.map((v) => (v ? 1 : 0));
    const d = frameDistance(inside, colourEdges({ data, channels: 3 }, W, H, 1, W, H), W, H, DEFAULT_FRAME.step);
    expect(d[0 * W + 60]).toBe(0); // on the frame
    expect(d[75 * W + 50]!).toBeLessThan(DEFAULT_FRAME.reach); // the band, far from the frame but flat
    expect(d[75 * W + 100]!).toBeGreaterThan(DEFAULT_FRAME.reach); // inside the disc: behind its outline
    expect(d[75 * W + 10]).toBe(Infinity); // outside the mask
  });

  it('cuts the band and keeps the product in front of it', () => {
    const { data, both } = scene();
    const inside = both.map((v) => (v ? 1 : 0));
    const cut = frameCut(inside, colourEdges({ data, channels: 3 }, W, H, 1, W, H), W, H);
    expect(cut).toBeDefined();
    expect(cut![75 * W + 100]).toBe(0);
    expect(cut![75 * W + 50]).toBe(1);
    expect(cut![5 * W + 100]).toBe(1);
  });

  it('fusion: both models taking the band and the product leaves only the product', () => {
    const { data, both } = scene();
    const { mask, parts, backdrop } = fuseMasks({ primary: both, second: both, image: { data, channels: 3 }, width: W, height: H });
    expect(backdrop).toBeDefined();
    expect(mask[75 * W + 100]).toBe(255);
    expect(mask[75 * W + 50]).toBe(0);
    expect(mask[10 * W + 100]).toBe(0);
    expect(parts).toHaveLength(1);
    expect(Math.abs(parts[0]!.area - Math.PI * 30 * 30) / (Math.PI * 30 * 30)).toBeLessThan(0.1);
    // keep=all keeps every salient region, the band too.
    expect(fuseMasks({ primary: both, second: both, image: { data, channels: 3 }, width: W, height: H }, 'all').mask[75 * W + 50]).toBeGreaterThanOrEqual(128);
  });

  it('leaves a subject that itself runs out of the frame alone (a dress cut at the hem)', () => {
    const data = new Uint8Array(W * H * 3).fill(90);
    const m = blank();
    for (let y = 40; y < H; y++) {
      for (let x = 60; x < 140; x++) {
        m[y * W + x] = 255;
        data.set([200, 40, 60], (y * W + x) * 3);
      }
    }
    const inside = m.map((v) => (v ? 1 : 0));
    expect(frameCut(inside, colourEdges({ data, channels: 3 }, W, H, 1, W, H), W, H)).toBeUndefined();
    const { mask } = fuseMasks({ primary: m, second: m, image: { data, channels: 3 }, width: W, height: H });
    expect(mask[100 * W + 100]).toBe(255);
    expect(mask[145 * W + 100]).toBe(255);
  });

  it('leaves a mask that does not reach the frame alone', () => {
    const { data } = scene();
    const m = blank();
    for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) if (inDisc(x, y, 100, 75, 30)) m[y * W + x] = 1;
    expect(frameCut(m, colourEdges({ data, channels: 3 }, W, H, 1, W, H), W, H)).toBeUndefined();
  });
});

describe('remove-background: the frame cut spares the product', () => {
  // A pot running out of the bottom of the frame (brown) and a sock standing on it (blue disc whose
  // lower part overlaps the pot's top), over grey. Only U2-Net-p takes the pot.
  function sockOnPot() {
    const data = new Uint8Array(W * H * 3).fill(90);
    const isnet = blank();
    const u2 = blank();
    for (let y = 0; y < H; y++) {
      for (let x = 0; x < W; x++) {
        const i = y * W + x;
        const pot = x >= 50 && x < 150 && y >= 90;
        const sock = inDisc(x, y, 100, 80, 25);
        // The sock is green, its toe (over the pot) the pot's brown: no edge between toe and pot.
        if (sock) data.set(y < 90 ? [60, 200, 120] : [140, 90, 60], i * 3);
        else if (pot) data.set([140, 90, 60], i * 3);
        if (sock) isnet[i] = 250;
        if (sock || pot) u2[i] = 240;
      }
    }
    return { data, isnet, u2 };
  }

  it('keeps what the model blind to the backdrop object is confident on (a sock toe over the pot)', () => {
    const { data, isnet, u2 } = sockOnPot();
    const inside = u2.map((v) => (v >= 128 ? 1 : 0));
    const cut = frameCut(inside, colourEdges({ data, channels: 3 }, W, H, 1, W, H), W, H);
    expect(cut).toBeDefined();
    expect(cut![100 * W + 100]).toBe(1); // the toe, over the pot: reached
    const { mask, backdrop } = fuseMasks({ primary: isnet, second: u2, image: { data, channels: 3 }, width: W, height: H });
    expect(backdrop).toBeDefined();
    expect(mask[100 * W + 100]).toBeGreaterThanOrEqual(128); // the toe stays
    expect(mask[70 * W + 100]).toBeGreaterThanOrEqual(128);
    expect(mask[130 * W + 100]).toBe(0); // the pot goes
  });

  it('gives back what both models are saturated on next to the product (a crown over an orange)', () => {
    // The product's colour is the backdrop object's: the geodesic crosses its outline.
    const data = new Uint8Array(W * H * 3).fill(90);
    const m = blank();
    for (let y = 0; y < H; y++) {
      for (let x = 0; x < W; x++) {
        const i = y * W + x;
        const band = x >= 40 && x < 160;
        const disc = inDisc(x, y, 100, 75, 30);
        if (band || disc) data.set([240, 150, 40], i * 3);
        if (disc) m[i] = 255;
        else if (band) m[i] = 235;
      }
    }
    // The product's lower half is closed by a dark line (its rim and a seam), the upper half not.
    for (let y = 0; y < H; y++) {
      for (let x = 0; x < W; x++) {
        const rim = y >= 75 && inDisc(x, y, 100, 75, 31) && !inDisc(x, y, 100, 75, 29);
        const seam = (y === 75 || y === 76) && inDisc(x, y, 100, 75, 30);
        if (rim || seam) data.set([60, 30, 10], (y * W + x) * 3);
      }
    }
    const inside = m.map((v) => (v >= 128 ? 1 : 0));
    const cut = frameCut(inside, colourEdges({ data, channels: 3 }, W, H, 1, W, H), W, H, { ...DEFAULT_FRAME, colourRatio: 0 });
    expect(cut![60 * W + 100]).toBe(1); // the geodesic took the upper half
    const { mask } = fuseMasks({ primary: m, second: m, image: { data, channels: 3 }, width: W, height: H });
    expect(mask[60 * W + 100]).toBe(255);
    expect(mask[85 * W + 100]).toBe(255);
    expect(mask[75 * W + 50]).toBe(0); // the band still goes
    // Merely confident (not saturated) there, nothing is given back.
    const soft = m.map((v) => (v === 255 ? 250 : v));
    expect(fuseMasks({ primary: soft, second: soft, image: { data, channels: 3 }, width: W, height: H }).mask[60 * W + 100]).toBe(0);
  });
});

describe('remove-background fusion: one model sure of a whole object', () => {
  // Two shoes side by side; ISNet is sure of both, U2-Net-p sees only the right one.
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
    const { mask, parts } = fuseMasks({ primary: a, second: b, image, width: W, height: H });
    expect(mask[75 * W + 55]).toBeGreaterThanOrEqual(128);
    expect(mask[75 * W + 145]).toBeGreaterThanOrEqual(128);
    expect(parts).toHaveLength(2);
  });

  it('drops it when nothing in the image outlines it (a hallucinated region)', () => {
    const { a, b, image } = pair(false);
    const { mask, parts } = fuseMasks({ primary: a, second: b, image, width: W, height: H });
    expect(mask[75 * W + 55]).toBeLessThan(128);
    expect(mask[75 * W + 145]).toBeGreaterThanOrEqual(128);
    expect(parts).toHaveLength(1);
  });
});

describe('remove-background fusion: each model cut by the frame on its own', () => {
  // A backdrop band runs out of the bottom of the frame (both models take it); a product sits in
  // front of its top (a blue disc only U2-Net-p finds, with a strong edge against the band); a
  // strip of the disc's colour runs from it to the top edge, which only ISNet takes; and a second
  // product (a green square both models find) stands apart. In the union the strip joins the disc
  // to the frame without an edge, so a cut of the union takes the disc with the band.
  function bridged() {
    const data = new Uint8Array(W * H * 3).fill(90);
    const isnet = blank();
    const u2 = blank();
    for (let y = 0; y < H; y++) {
      for (let x = 0; x < W; x++) {
        const i = y * W + x;
        const band = x >= 40 && x < 160 && y >= 85;
        const disc = inDisc(x, y, 100, 60, 28);
        const strip = x >= 90 && x < 110 && y < 40;
        const square = x >= 5 && x < 30 && y >= 20 && y < 50;
        if (disc || strip) data.set([40, 80, 230], i * 3);
        else if (band) data.set([240, 150, 40], i * 3);
        else if (square) data.set([40, 200, 60], i * 3);
        if ((band && !disc) || square) isnet[i] = u2[i] = 235;
        if (strip && !disc) isnet[i] = 230;
        if (disc) u2[i] = 250;
      }
    }
    return { data, isnet, u2 };
  }

  it('keeps a product only one model found when the other model bridges it to the frame', () => {
    const { data, isnet, u2 } = bridged();
    const image = { data, channels: 3 };
    const { mask, backdrop } = fuseMasks({ primary: isnet, second: u2, image, width: W, height: H });
    expect(backdrop).toBeDefined();
    expect(mask[60 * W + 100]).toBeGreaterThanOrEqual(128); // the disc
    expect(mask[30 * W + 15]).toBeGreaterThanOrEqual(128); // the square
    expect(mask[130 * W + 100]).toBe(0); // the band
    expect(mask[10 * W + 100]).toBe(0); // the strip
    // Cutting the union instead: the geodesic runs down the strip into the disc.
    const union = fuseMasks({ primary: isnet, second: u2, image, width: W, height: H }, 'auto', {
      ...DEFAULT_FUSION,
      frame: { ...DEFAULT_FRAME, perModel: false },
    });
    expect(union.backdrop?.[60 * W + 100]).toBe(1);
    expect(union.mask[60 * W + 100]).toBe(0);
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

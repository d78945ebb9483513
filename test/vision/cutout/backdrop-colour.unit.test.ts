import { describe, expect, it } from 'vitest';
import { addByBackdropColour, backdropDistance, DEFAULT_BACKDROP_COLOUR } from '../../../src/vision/cutout/backdrop-colour.js';
import { primaryDecisive } from '../../../src/vision/cutout/fusion.js';
import { meanWhere } from './mask-stats.js';

const W = 240,
  H = 180;
type RGB = [number, number, number];

/** A plain backdrop (a faint vertical gradient, as a studio sweep) with a painter for the rest. */
function scene(paint: (x: number, y: number) => RGB | undefined, backdrop: RGB = [228, 222, 218]) {
  const data = new Uint8Array(W * H * 3);
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++) {
      const c = paint(x, y) ?? (backdrop.map((v) => v - Math.round((y / H) * 10)) as RGB);
      data.set(c, (y * W + x) * 3);
    }
  return { data, channels: 3 };
}
const inDisc = (x: number, y: number, cx: number, cy: number, r: number) => (x - cx) ** 2 + (y - cy) ** 2 <= r * r;
const mean = (m: Uint8Array, keep: (x: number, y: number) => boolean) => meanWhere(m, W, H, keep);
function maskOf(v: (x: number, y: number) => number): Uint8Array {
  const m = new Uint8Array(W * H);
  for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) m[y * W + x] = v(x, y);
  return m;
}

// A ball cut by the bottom border: orange with a dark red-brown band the model left out (as ISNet
// on the bench's basketball and crown over plain and studio backdrops).
const ball = (x: number, y: number) => inDisc(x, y, 120, 170, 100);
const seam = (x: number, y: number) => ball(x, y) && y >= 110 && y < 130;
const ballScene = (extra?: (x: number, y: number) => RGB | undefined) =>
  scene((x, y) => extra?.(x, y) ?? (seam(x, y) ? [150, 50, 20] : ball(x, y) ? [235, 125, 45] : undefined));

describe('backdrop colour (issue 32): parts the model left out on a plain backdrop', () => {
  it('adds a band of the subject the model left out, enclosed by the subject', () => {
    const model = maskOf((x, y) => (ball(x, y) && !seam(x, y) ? 255 : 0));
    const r = addByBackdropColour(model, ballScene(), W, H);
    expect(mean(r.mask, seam)).toBeGreaterThan(250);
    // The backdrop stays out.
    expect(mean(r.mask, (x, y) => !ball(x, y))).toBeLessThan(1);
    expect(r.added).toBeGreaterThan(0.03);
  });

  it('raises the model half-decided values on the subject, not on the backdrop', () => {
    // The upper half of the ball at 150 (half-decided), a halo of 100 on the backdrop around it.
    const halo = (x: number, y: number) => !ball(x, y) && inDisc(x, y, 120, 170, 108);
    const model = maskOf((x, y) => (ball(x, y) ? (y < 110 ? 150 : 255) : halo(x, y) ? 100 : 0));
    const r = addByBackdropColour(model, ballScene(), W, H);
    expect(mean(r.mask, (x, y) => ball(x, y) && y < 110)).toBeGreaterThan(250);
    expect(mean(r.mask, halo)).toBe(100);
  });

  it('leaves a hole that shows the backdrop in shadow (a cup handle) alone', () => {
    // A ring: the opening is the backdrop at 45% of its light, a cast shadow.
    const ring = (x: number, y: number) => inDisc(x, y, 120, 90, 60) && !inDisc(x, y, 120, 90, 35);
    const hole = (x: number, y: number) => inDisc(x, y, 120, 90, 35);
    const img = scene((x, y) => (ring(x, y) ? [150, 120, 200] : hole(x, y) ? [103, 100, 98] : undefined));
    const model = maskOf((x, y) => (ring(x, y) ? 255 : 0));
    const r = addByBackdropColour(model, img, W, H);
    expect(mean(r.mask, hole)).toBe(0);
  });

  it('leaves a second thing that borders the backdrop alone (a table under the product)', () => {
    // A blue table top along the bottom (a colour far from the backdrop's), touching the ball, which the model left out.
    const table = (x: number, y: number) => y >= 150 && !ball(x, y);
    const model = maskOf((x, y) => (ball(x, y) ? 255 : 0));
    const r = addByBackdropColour(
      model,
      ballScene((x, y) => (table(x, y) ? [30, 60, 200] : undefined)),
      W,
      H,
    );
    expect(mean(r.mask, table)).toBeLessThan(5);
  });

  it('leaves the model soft halo over a floor of another colour alone', () => {
    // The ball stands on a blue floor (the lower third); the model's halo of 120 reaches over it.
    const floor = (x: number, y: number) => y >= 120 && !ball(x, y);
    const halo = (x: number, y: number) => floor(x, y) && inDisc(x, y, 120, 170, 110);
    const img = scene((x, y) => (ball(x, y) ? [235, 125, 45] : floor(x, y) ? [30, 60, 200] : undefined));
    const model = maskOf((x, y) => (ball(x, y) ? 255 : halo(x, y) ? 120 : 0));
    expect(mean(addByBackdropColour(model, img, W, H).mask, halo)).toBe(120);
  });

  it('leaves specks alone: a few pixels left out are not evidence', () => {
    // A 5x5 spot of the ball's colour inside it, which the model left out (0.06% of the frame).
    const notch = (x: number, y: number) => x >= 118 && x < 123 && y >= 100 && y < 105;
    const img = scene((x, y) => (ball(x, y) || notch(x, y) ? [235, 125, 45] : undefined));
    const model = maskOf((x, y) => (ball(x, y) && !notch(x, y) ? 255 : 0));
    expect(mean(addByBackdropColour(model, img, W, H).mask, notch)).toBe(0);
  });

  it('does nothing on a textured backdrop', () => {
    // A low-contrast checker, 4 px squares: about one colour, but busy at the analysis scale.
    const img = scene((x, y) => (seam(x, y) ? [150, 50, 20] : ball(x, y) ? [235, 125, 45] : ((x >> 2) + (y >> 2)) % 2 ? [229, 223, 219] : [217, 211, 207]));
    const model = maskOf((x, y) => (ball(x, y) && !seam(x, y) ? 255 : 0));
    const r = addByBackdropColour(model, img, W, H);
    expect(r.added).toBe(0);
    expect(r.mask).toBe(model);
  });

  it('a cast shadow is near the backdrop, another colour is far; black is left to the model', () => {
    const ref = [228, 222, 218];
    const { shadowFloor: f, far, ramp } = DEFAULT_BACKDROP_COLOUR;
    // The backdrop at half its light: a shadow.
    expect(backdropDistance(114, 111, 109, ref, f)).toBeLessThan(ramp[0]);
    expect(backdropDistance(235, 125, 45, ref, f)).toBeGreaterThan(far);
    expect(backdropDistance(150, 50, 20, ref, f)).toBeGreaterThan(far);
    // Neutral and very dark: a black part or a deep contact shadow, colour cannot tell, so no rule adds it.
    expect(backdropDistance(40, 40, 40, ref, f)).toBeLessThan(far);
  });
});

describe('primaryDecisive: when ISNet alone settles the cut-out and U2-Net-p is not run', () => {
  const disc = (cx: number, cy: number, r: number, v = 255) => maskOf((x, y) => (inDisc(x, y, cx, cy, r) ? v : 0));
  it('one confident subject with a thin fringe: decisive', () => {
    expect(primaryDecisive(disc(120, 90, 50), W, H)).toBe(true);
  });
  it('two separate things, a lost subject, or a half-decided one: not', () => {
    const two = disc(60, 90, 30);
    two.set(
      disc(180, 90, 30).map((v, i) => v || two[i]!),
      0,
    );
    expect(primaryDecisive(two, W, H)).toBe(false);
    expect(primaryDecisive(disc(120, 90, 8), W, H)).toBe(false);
    const half = disc(120, 90, 60, 150);
    half.set(disc(120, 90, 40).map((v, i) => v || half[i]!));
    expect(primaryDecisive(half, W, H)).toBe(false);
  });
});

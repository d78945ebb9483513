// Issue 35, round 14: where old clothing covers the neck up to the chin (a spacesuit's neck ring,
// a turtleneck), the new top's neckline opening showed its inner back as a thick band under the
// face. bare-neck.ts paints a neck there. Round 17: the painted neck continues the photo's skin
// above it column by column, and its light across; the jaw's shadow only where none shows.
// Round 19: a photo that shows its own neck, or a head bent down to the shoulders, gets one only
// inside the opening, under and beside the photo's neck.
// Round 20: the seam's colour is carried into the paint as a field over the plane, not down each
// column (a V's lit sides drew a stripe).
// Round 22: the painted neck takes the photo's skin grain (skin-grain.ts); flat paint read as a
// plastic panel under grace_hopper.jpg's chin.
import { describe, expect, it } from 'vitest';
import { type NeckColumn, neckColumn, neckColumnAlpha, ownNeck, paintBareNeck } from '../../../src/ops/try-on/bare-neck.js';
import type { BodyGeometry } from '../../../src/ops/try-on/body.js';
import { headShape, inHead } from '../../../src/ops/try-on/head.js';
import { median, plane } from '../../../src/ops/try-on/raster.js';
import { frontalFace } from './face.js';

const W = 100,
  H = 160;
const SKIN = [205, 150, 125],
  SUIT = [40, 45, 70];

/**
 * A frontal face (eyes y 40, mouth y 60, chin y 72, ears x 30 / 70) over a suit up to the chin;
 * shoulders at `shoulderY`, 60 px apart; `neckSkin`: the photo shows its neck; `skinMap`: the
 * skin rule finds the skin (not on a greyscale photo); `strip`: the photo's neck just under the
 * chin, a colour or one per column.
 */
function scene(shoulderY: number, neckSkin = false, skinMap = true, strip: number[] | ((x: number) => number[]) | null = null, neckRule = true) {
  const head = headShape(frontalFace(), W, H)!;
  const rgb = new Uint8Array(W * H * 3);
  const skin = new Uint8Array(W * H);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const i = y * W + x;
      const inFace = inHead(head, x, y);
      // The photo's own neck, when it shows one: skin from the chin down, 24 px wide; in shadow
      // (`neckRule` false: 0.45 of the face's light) the colour rule misses it.
      const inNeck = !inFace && neckSkin && y > 60 && y < shoulderY && Math.abs(x - 50) < 12;
      // A strip of the photo's own neck just under the chin, in its own colour, before the suit.
      const inStrip = strip !== null && !inFace && y > 72 && y <= 78 && Math.abs(x - 50) < 14;
      const stripColour = typeof strip === 'function' ? strip(x) : strip;
      const colour = inStrip ? stripColour! : inFace ? SKIN : inNeck ? (neckRule ? SKIN : SKIN.map((v) => Math.round(0.45 * v))) : SUIT;
      rgb.set(colour, i * 3);
      skin[i] = skinMap && (inFace || inStrip || (inNeck && neckRule)) ? 1 : 0;
    }
  }
  const body = {
    width: W,
    height: H,
    head,
    skin: plane(W, H, skin),
    shoulderW: 60,
    shoulderY,
    shoulderL: { x: 20, y: shoulderY },
    shoulderR: { x: 80, y: shoulderY },
  } as unknown as BodyGeometry;
  const keep = new Uint8Array(W * H);
  for (let i = 0; i < W * H; i++) keep[i] = inHead(head, i % W, Math.floor(i / W)) ? 255 : 0;
  const colourAt = (x: number, y: number) => {
    const i = (Math.floor(y) * W + Math.floor(x)) * 3;
    return [rgb[i]!, rgb[i + 1]!, rgb[i + 2]!] as const;
  };
  return { body, rgb, skin: plane(W, H, skin), keep: plane(W, H, keep), colourAt };
}

/** No skin of the photo's own under the chin. */
const NO_NECK = { whole: plane(W, H), core: plane(W, H) };

/** A neckline opening from row y0 down, 27 px either side of the middle (the garment covers the rest). */
const openingFrom = (y0: number) =>
  plane(
    W,
    H,
    new Uint8Array(W * H).map((_, i) => (Math.floor(i / W) >= y0 && Math.abs((i % W) - 50) < 27 ? 255 : 0)),
  );

/** A neckline opening over the whole image. */
const OPEN = plane(W, H, new Uint8Array(W * H).fill(255));

/**
 * The scene with its neck painted as the pipeline paints it: round the photo's own neck and skin
 * (`col.own`, full size, and its core, ownNeck), the whole image inside the outline, inside
 * `opening`.
 */
async function painted(s: ReturnType<typeof scene>, col: NeckColumn, opening = OPEN): Promise<Uint8Array> {
  const own = plane(
    W,
    H,
    col.own.data.map((v) => v * 255),
  );
  const out = s.rgb.slice();
  paintBareNeck(out, s.rgb, 3, col, s.body, 1, await ownNeck(own, s.body.shoulderW, 1), s.keep, new Float32Array(W * H).fill(1), opening, W, H);
  return out;
}

/** A strip colour per column, lit from the image's left: 1.15 of `c`'s light at x 37, 0.85 at x 63. */
const litFromLeft = (c: number[]) => (x: number) => c.map((v) => Math.round(v * (1.15 - (0.3 * (x - 37)) / 26)));

const at = (rgb: Uint8Array, x: number, y: number) => [...rgb.subarray((y * W + x) * 3, (y * W + x) * 3 + 3)];
const lum = (c: number[]) => 0.299 * c[0]! + 0.587 * c[1]! + 0.114 * c[2]!;

/** The painted points are in the face skin's hue, at least `light` of its luma. */
function expectSkin(out: Uint8Array, points: Array<[number, number]>, light = 0.75) {
  for (const [x, y] of points) {
    const c = at(out, x, y);
    expect(c[0]! / c[2]!).toBeCloseTo(SKIN[0]! / SKIN[2]!, 1);
    expect(lum(c)).toBeGreaterThan(light * lum(SKIN));
  }
}

describe('bare neck', () => {
  it('paints a neck in the face skin under a suit that covers it up to the chin', () => {
    const s = scene(110);
    const col = neckColumn(s.body, s.skin, s.colourAt);
    expect(col).not.toBeNull();
    // The opening shows the column, not beside it, and not over the head.
    const alpha = neckColumnAlpha(col!, s.body, 1, OPEN, W, H);
    expect(alpha.data[95 * W + 50]).toBe(255);
    expect(alpha.data[95 * W + 20]).toBe(0);
    expect(alpha.data[50 * W + 50]).toBe(0);
    // The person's outline: the right edge of the neck (x >= 57) lies outside it.
    const inside = new Float32Array(W * H).map((_, i) => (i % W < 57 ? 1 : 0));
    const out = s.rgb.slice();
    paintBareNeck(out, s.rgb, 3, col!, s.body, 1, NO_NECK, s.keep, inside, OPEN, W, H);
    // The suit under the chin is now the face's skin colour (no neck of its own shows): the
    // lower neck as lit as the face, the same hue.
    const mid = at(out, 50, 100);
    expect(mid[0]! / mid[2]!).toBeCloseTo(SKIN[0]! / SKIN[2]!, 1);
    expect(Math.abs(lum(mid) - lum(SKIN))).toBeLessThan(2);
    // Darkest right under the jaw, and towards its sides (a cylinder).
    expect(lum(at(out, 50, 74))).toBeLessThan(lum(mid) - 10);
    expect(lum(at(out, 40, 100))).toBeLessThan(lum(mid) - 5);
    // The face is untouched, as is the suit beside the neck.
    expect(at(out, 50, 50)).toEqual(SKIN);
    expect(at(out, 15, 100)).toEqual(SUIT);
    // Nothing is painted outside the person's outline.
    expect(at(out, 58, 100)).toEqual(SUIT);
    expect(at(out, 55, 100)).not.toEqual(SUIT);
  });

  it("continues the photo's own neck where a strip of it shows under the chin: its width and colour", async () => {
    const NECK = [150, 100, 90];
    const s = scene(110, false, true, NECK);
    const col = neckColumn(s.body, s.skin, s.colourAt)!;
    expect(col).not.toBeNull();
    // As wide as the strip (27 px), not the face's figure (0.18 shoulder widths: 10.8 px).
    expect(col.half(col.chinY)).toBe(13.5);
    const out = await painted(s, col);
    // Below the strip the painted neck has the strip's colour (its hue, not the face's) ...
    const below = at(out, 50, 84);
    expect(below[0]! / below[1]!).toBeCloseTo(NECK[0]! / NECK[1]!, 1);
    expect(Math.abs(below[0]! / below[1]! - SKIN[0]! / SKIN[1]!)).toBeGreaterThan(0.1);
    // ... and the strip itself is the photo's, untouched.
    expect(at(out, 50, 75)).toEqual(NECK);
  });

  it("continues the photo's neck column by column, and its light across, out of the jaw's shadow", async () => {
    const NECK = [170, 120, 100];
    const lit = litFromLeft(NECK);
    const s = scene(110, false, true, lit);
    const col = neckColumn(s.body, s.skin, s.colourAt)!;
    const out = await painted(s, col);
    for (const x of [42, 50, 58]) {
      // Right under the strip, each column in the strip's colour: no step at the seam ...
      expect(Math.abs(lum(at(out, x, 79)) - lum(lit(x)))).toBeLessThan(4);
      // ... and, down the neck, no jaw's shadow under the strip: as lit as the strip was.
      expect(lum(at(out, x, 100))).toBeGreaterThan(0.9 * lum(lit(x)));
    }
    // The photo's light across the neck goes on down it: its left side the lighter.
    expect(lum(at(out, 44, 100)) - lum(at(out, 56, 100))).toBeGreaterThan(10);
  });

  it("carries the seam's colour on smoothly where the photo's neck ends deeper in some columns (a V)", async () => {
    // Round 20: the seam's difference went down each column from that column's own seam, so a
    // column whose seam lay deeper kept more of it further down, and the light rim along a V's
    // sides drew a lighter stripe down grace_hopper.jpg's painted neck.
    const NECK = [170, 120, 100];
    const s = scene(110, false, true, NECK);
    // The photo's neck runs on down to y 90 between x 44 and 56, its sides lit (a white collar's
    // light along a V's sides).
    const rim = NECK.map((v) => Math.round(1.25 * v));
    for (let y = 79; y <= 90; y++) {
      for (let x = 44; x <= 56; x++) {
        s.rgb.set(x <= 45 || x >= 55 ? rim : NECK, (y * W + x) * 3);
        s.skin.data[y * W + x] = 1;
      }
    }
    const col = neckColumn(s.body, s.skin, s.colourAt)!;
    const out = await painted(s, col);
    // Below the tongue, along the rows across the neck: no stripe (a column's light off the
    // curve its neighbours make: 11.7 levels at the tongue's sides before, 3.2 after).
    let kink = 0;
    for (const y of [92, 96, 104]) {
      for (let x = 40; x <= 60; x++) kink = Math.max(kink, Math.abs(lum(at(out, x - 1, y)) - 2 * lum(at(out, x, y)) + lum(at(out, x + 1, y))));
    }
    expect(kink).toBeLessThan(5);
  });

  it("blends the painted neck into the photo's last rows of skin above it, where the skin mixes with the suit", async () => {
    const NECK = [150, 100, 90];
    const s = scene(110, false, true, NECK);
    // The strip's last row (y 78) half skin, half the suit below: a dark line along its foot.
    const MIX = NECK.map((v, c) => Math.round((v + SUIT[c]!) / 2));
    for (let x = 0; x < W; x++) if (s.skin.data[78 * W + x]) s.rgb.set(MIX, (78 * W + x) * 3);
    const col = neckColumn(s.body, s.skin, s.colourAt)!;
    const out = await painted(s, col);
    // The foot is painted like the neck below it; the strip above blends into it and further up
    // stays the photo's.
    const foot = at(out, 50, 78),
      below = at(out, 50, 79);
    expect(Math.abs(lum(foot) - lum(below))).toBeLessThan(6);
    expect(lum(foot) - lum(MIX)).toBeGreaterThan(15);
    expect(Math.abs(lum(at(out, 50, 77)) - lum(NECK))).toBeLessThan(6);
    expect(at(out, 50, 75)).toEqual(NECK);
  });

  it("spreads into the shoulders and runs on under the opening's front edge, inside the opening only", () => {
    const s = scene(110);
    const col = neckColumn(s.body, s.skin, s.colourAt)!;
    // The opening: from y 95 down, 27 px either side of the middle (the garment covers the rest).
    const opening = openingFrom(95);
    const alpha = neckColumnAlpha(col, s.body, 1, opening, W, H);
    // Half a shoulder width under the shoulder line the neck still shows whole: its front edge
    // is the garment's (it faded out 0.2 shoulder widths under the line, into the inner back).
    expect(alpha.data[140 * W + 50]).toBe(255);
    // Under the shoulder line it is as wide as the opening, 25 px off the middle (the neck's
    // half-width: 11) ...
    expect(alpha.data[115 * W + 25]).toBe(255);
    // ... but not outside the opening, nor beside the neck above where it meets the shoulders.
    expect(alpha.data[115 * W + 20]).toBe(0);
    expect(alpha.data[98 * W + 25]).toBe(0);
    const out = s.rgb.slice();
    paintBareNeck(out, s.rgb, 3, col, s.body, 1, NO_NECK, s.keep, new Float32Array(W * H).fill(1), opening, W, H);
    expectSkin(out, [
      [50, 140],
      [25, 115],
    ]);
    expect(at(out, 20, 115)).toEqual(SUIT);
    expect(at(out, 25, 98)).toEqual(SUIT);
  });

  it("lights the spread as the neck, with no step at the neck's sides and no channel clipped", async () => {
    // A light strip lit from the image's left (1.15 to 0.85 of NECK): the slope's lit side on
    // the spread, which turns to the front, ran past white (red clipped first: a paler hue);
    // and the spread was held at the neck's middle light while the neck's side beside it was
    // lighter, a line along the side.
    const NECK = [220, 170, 140];
    const lit = litFromLeft(NECK);
    const s = scene(110, false, true, lit);
    const col = neckColumn(s.body, s.skin, s.colourAt)!;
    const out = await painted(s, col);
    const brightest = Math.max(...[37, 50, 63].map((x) => lum(lit(x))));
    for (const y of [106, 112, 125]) {
      // Across the painted skin, its anti-aliased sides left out.
      const x0 = Math.ceil(col.cx(y) - col.wide(y)) + 2,
        x1 = Math.floor(col.cx(y) + col.wide(y)) - 2;
      for (let x = x0; x <= x1; x++) {
        const c = at(out, x, y);
        expect(Math.abs(c[0]! / c[1]! - NECK[0]! / NECK[1]!)).toBeLessThan(0.015);
        expect(lum(c)).toBeLessThan(1.06 * brightest);
        if (x > x0) expect(Math.abs(lum(c) - lum(at(out, x - 1, y)))).toBeLessThan(5);
      }
    }
  });

  it("leaves a photo's own neck, and paints only inside the opening under and beside it (a collar under the neck)", async () => {
    // The photo's neck shows down to the shoulder line (y 110), 24 px wide, the suit's collar
    // under and beside it. The opening: from y 95 down, 27 px either side of the middle.
    const s = scene(110, true);
    const col = neckColumn(s.body, s.skin, s.colourAt)!;
    expect(col.shows).toBe(true);
    const opening = openingFrom(95);
    const alpha = neckColumnAlpha(col, s.body, 1, opening, W, H);
    const out = await painted(s, col, opening);
    // Its own neck stays the photo's.
    expect(at(out, 50, 90)).toEqual(SKIN);
    expect(at(out, 50, 105)).toEqual(SKIN);
    // Beside it above the opening the collar's back lies behind the neck: nothing painted or
    // shown (painted there, the column stood as a pillar either side of grace_hopper.jpg's neck).
    expect(alpha.data[85 * W + 38]).toBe(0);
    expect(at(out, 38, 85)).toEqual(SUIT);
    // Under and beside it inside the opening: the neck going on into the shoulders, in its hue
    // (the inner back was drawn there, a bib of cloth under the neck).
    const inside: Array<[number, number]> = [
      [50, 125],
      [30, 112],
    ];
    for (const [x, y] of inside) expect(alpha.data[y * W + x]).toBe(255);
    expectSkin(out, inside);
    expect(at(out, 20, 115)).toEqual(SUIT);
  });

  it("leaves a neck in shadow the colour rule misses: it has the face skin's chromaticity", async () => {
    const s = scene(110, true, true, null, false);
    expect(s.skin.data[95 * W + 50]).toBe(0);
    const col = neckColumn(s.body, s.skin, s.colourAt)!;
    expect(col.shows).toBe(true);
    // The shadowed neck is the photo's own, joined to the head, and stays as it is.
    expect(col.own.data[95 * W + 50]).toBe(1);
    const DIM = SKIN.map((v) => Math.round(0.45 * v));
    const out = await painted(s, col);
    for (const y of [80, 95, 105]) expect(at(out, 50, y)).toEqual(DIM);
  });

  it('leaves a photo whose face the skin rule does not find (greyscale: its neck cannot be told from a collar)', () => {
    const s = scene(110, true, false);
    expect(neckColumn(s.body, s.skin, s.colourAt)).toBeNull();
  });

  it('paints a head bent to the shoulders only inside the opening, under the chin (it shows no neck)', async () => {
    // Shoulders at y 79, 7 px under the chin. The opening: from y 85 down, 27 px either side of
    // the middle (round 18 painted none: messi5.jpg's t-shirt showed its inner back inside the
    // ring up to the chin, the coat its lining).
    const s = scene(79);
    const col = neckColumn(s.body, s.skin, s.colourAt)!;
    expect(col.shows).toBe(true);
    const opening = openingFrom(85);
    const alpha = neckColumnAlpha(col, s.body, 1, opening, W, H);
    const out = await painted(s, col, opening);
    // Nothing between the chin and the opening, nor outside it.
    expect(alpha.data[78 * W + 50]).toBe(0);
    expect(at(out, 50, 78)).toEqual(SUIT);
    expect(at(out, 20, 95)).toEqual(SUIT);
    const inside: Array<[number, number]> = [
      [50, 90],
      [30, 95],
    ];
    for (const [x, y] of inside) expect(alpha.data[y * W + x]).toBe(255);
    // In the jaw's shadow (the face's skin: under a bent head the rows above are the face's).
    expectSkin(out, inside, 0.6);
  });

  it("takes the grain of the photo's skin: flat paint under a grainy face, none under a smooth one", async () => {
    // The face's skin with uniform noise of +-12 levels on each pixel (every channel alike).
    const grainy = scene(110);
    let seed = 11;
    for (let i = 0; i < W * H; i++) {
      if (!grainy.skin.data[i]) continue;
      seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
      const d = Math.round(24 * (seed / 4294967296 - 0.5));
      for (let c = 0; c < 3; c++) grainy.rgb[i * 3 + c] = SKIN[c]! + d;
    }
    const col = neckColumn(grainy.body, grainy.skin, grainy.colourAt)!;
    const out = await painted(grainy, col);
    // The luma's spread about its 4 neighbours' mean (median absolute deviation x 1.4826).
    const grain = (rgb: Uint8Array, x0: number, x1: number, y0: number, y1: number) => {
      const d: number[] = [];
      for (let y = y0; y <= y1; y++)
        for (let x = x0; x <= x1; x++) {
          const n = (lum(at(rgb, x - 1, y)) + lum(at(rgb, x + 1, y)) + lum(at(rgb, x, y - 1)) + lum(at(rgb, x, y + 1))) / 4;
          d.push(Math.abs(lum(at(rgb, x, y)) - n));
        }
      return 1.4826 * median(d);
    };
    const face = grain(grainy.rgb, 42, 58, 48, 56),
      neck = grain(out, 44, 56, 88, 104);
    // Half the face's (GRAIN_SHARE); the flat paint before had none.
    expect(neck).toBeGreaterThan(0.3 * face);
    expect(neck).toBeLessThan(0.8 * face);
    // A smooth face: smooth paint (the first test's lower neck is within 2 levels of the face).
    const smooth = scene(110);
    const flat = await painted(smooth, neckColumn(smooth.body, smooth.skin, smooth.colourAt)!);
    expect(grain(flat, 44, 56, 88, 104)).toBeLessThan(0.5);
  });
});

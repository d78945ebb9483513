// Issue 35: the head kept in front of the garment is shaped by the face landmarks (full width to
// the mouth, a half-ellipse to the chin), not a box whose lower corners held the old collar.
// Round 10: the old clothing inside that box is not head. A head bent to the shoulders
// (messi5.jpg) holds the jersey's collar and shoulder beside the jaw; they stayed in front of the
// new garment. clothing-colour.ts tells the clothing's colours from the head's, skin.ts keeps
// only the face's own skin colour beside it, head.ts trims the shape.
import { describe, expect, it } from 'vitest';
import { clothingColour } from '../../../src/ops/try-on/clothing-colour.js';
import { headShape, inHead, trimHead } from '../../../src/ops/try-on/head.js';
import { plane } from '../../../src/ops/try-on/raster.js';
import { faceSkinOnly, skinMask } from '../../../src/ops/try-on/skin.js';
import { frontalFace } from './face.js';

describe('headShape', () => {
  it('is full width down to the mouth, then narrows to the chin at mouth + 0.6 x eye-mouth', () => {
    const s = headShape(frontalFace(), 200, 200)!;
    expect(s.mouthY).toBe(60);
    expect(s.chinY).toBeCloseTo(72, 5);
    // Full width at the ears' and mouth's rows (the landmarks' span 30..70, 15% wider each side).
    expect(inHead(s, 25, 45)).toBe(true);
    expect(inHead(s, 25, 60)).toBe(true);
    // The chin below the mouth stays in front ...
    expect(inHead(s, 50, 71)).toBe(true);
    // ... but the lower corners of the old box (to mouth + 0.7 x eye-mouth = 74) do not: that is
    // where the old collar sits beside a bent head.
    expect(inHead(s, 26, 70)).toBe(false);
    expect(inHead(s, 74, 70)).toBe(false);
    expect(inHead(s, 50, 74)).toBe(false);
    // The nape: the ears' row + 0.5 x eye-mouth.
    expect(s.napeY).toBeCloseTo(55, 5);
  });

  it('needs five face landmarks seen', () => {
    const L = frontalFace().map((p, i) => (i < 11 && i > 3 ? { ...p, v: 0 } : p));
    expect(headShape(L, 200, 200)).toBeNull();
  });
});

const W = 100,
  H = 140;
const SKIN = [205, 150, 125],
  HAIR = [60, 40, 30],
  RED = [190, 45, 80],
  BLUE = [35, 45, 130],
  YELLOW_TRIM = [187, 151, 77];

/**
 * A footballer's head and shoulders: hair above y 30, a face (skin ellipse around (50, 48),
 * 16 x 24 half-axes) with red lips at the mouth, a jersey of red and blue vertical stripes
 * from y 62 down, reaching up beside the face to y 50 at x < 34 and x > 66 (the shoulders of a
 * head bent down), a yellow-orange collar trim that passes the colour skin rule beside the jaw.
 */
function photo(opts: { grey?: boolean } = {}) {
  const rgb = new Uint8Array(W * H * 3);
  const put = (i: number, c: number[]) => {
    const v = opts.grey ? Math.round((c[0]! + c[1]! + c[2]!) / 3) : -1;
    for (let k = 0; k < 3; k++) rgb[i * 3 + k] = v >= 0 ? v : c[k]!;
  };
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const i = y * W + x;
      const stripe = Math.floor(x / 8) % 2 ? RED : BLUE;
      const inFace = ((x - 50) / 16) ** 2 + ((y - 48) / 24) ** 2 <= 1;
      if (inFace && y >= 30) put(i, Math.abs(y - 61) <= 1 && Math.abs(x - 50) <= 4 ? RED : SKIN);
      else if (y < 30 || (y < 50 && x >= 26 && x <= 74)) put(i, HAIR);
      else if ((x === 35 || x === 65) && y >= 58 && y <= 70) put(i, YELLOW_TRIM);
      else if (y >= 62 || x < 34 || x > 66) put(i, stripe);
      else put(i, HAIR);
    }
  }
  return rgb;
}

/** The red stripe mixed with a grey-blue backdrop: pink. */
const MIX = [150, 82, 120];

/** The photo, its head shape and colour judge; `hairLikeJersey`: the hair painted the blue stripe's grey; `mix`: these pixels painted MIX. */
function setup(opts: { grey?: boolean; hairLikeJersey?: boolean; mix?: ReadonlyArray<readonly [number, number]> } = {}) {
  const rgb = photo(opts);
  if (opts.hairLikeJersey) for (let i = 0; i < W * 30; i++) for (let k = 0; k < 3; k++) rgb[i * 3 + k] = 70;
  for (const [x, y] of opts.mix ?? []) for (let k = 0; k < 3; k++) rgb[(y * W + x) * 3 + k] = MIX[k]!;
  const sil = plane(W, H, new Uint8Array(W * H).fill(1));
  const shape = headShape(frontalFace(), W, H)!;
  const quad = [
    { x: 20, y: 75 },
    { x: 80, y: 75 },
    { x: 80, y: 135 },
    { x: 20, y: 135 },
  ];
  const colours = clothingColour(rgb, sil, quad, 62, { x0: shape.x0 - 26, x1: shape.x1 + 26, eyeY: shape.eyeY }, (x, y) => inHead(shape, x, y));
  return { rgb, sil, shape, colours };
}

describe('clothingColour', () => {
  it("tells the jersey's stripes from the head's hair and skin", () => {
    const { colours } = setup();
    const at = (x: number, y: number) => colours.clothing(y * W + x);
    expect(at(4, 100)).toBe(true); // blue stripe
    expect(at(12, 100)).toBe(true); // red stripe
    expect(at(50, 10)).toBe(false); // hair
    expect(at(50, 45)).toBe(false); // face skin
  });

  it('says nothing on a greyscale photo whose hair and jersey are the same grey', () => {
    // grey(BLUE) = 70, grey(HAIR) = 43: far apart; the hair is painted the jersey's grey.
    const { colours } = setup({ grey: true, hairLikeJersey: true });
    expect(colours.clothing(100 * W + 4)).toBe(false); // the blue stripe's grey, also the hair's
  });
});

describe('trimHead', () => {
  it('cuts the jersey beside the jaw out of the head shape and keeps the face, lips and hair', () => {
    const { rgb, shape, colours } = setup();
    const skin = skinMask(rgb, W, H, 3);
    const head = trimHead(shape, skin, colours);
    // The shape's box reaches x 24..76 at the mouth row: the stripes at x < 34 / x > 66 in it.
    expect(inHead(shape, 28, 55)).toBe(true);
    expect(inHead(head, 28, 55)).toBe(false);
    expect(inHead(head, 72, 58)).toBe(false);
    // The face, its red lips (inside the face skin's span) and the hair above the eyes stay.
    expect(inHead(head, 50, 50)).toBe(true);
    expect(inHead(head, 50, 61)).toBe(true);
    expect(inHead(head, 30, 20)).toBe(true);
  });

  it("cuts the jersey's edge, a mix the head does not show, above the mouth row too, and only next to the jersey", () => {
    // The red stripe mixed with a grey-blue backdrop (pink; no colour of the jersey's, nor the
    // skin rule's) just above the jersey's top beside the face (y 50), running on up to y 46
    // (the stripes beside the hair reach x 25 on rows 30..49, 5 px off).
    const { rgb, shape, colours } = setup({
      mix: [
        [31, 49],
        [30, 49],
        [30, 48],
        [30, 47],
        [30, 46],
      ],
    });
    expect(colours.clothing(49 * W + 30)).toBe(false);
    expect(colours.foreign(49 * W + 30)).toBe(true);
    const head = trimHead(shape, skinMask(rgb, W, H, 3), colours);
    expect(inHead(shape, 30, 49)).toBe(true);
    // Above the mouth row (60) a foreign colour alone is not cut: it is, next to the jersey.
    expect(inHead(head, 30, 49)).toBe(false);
    expect(inHead(head, 31, 49)).toBe(false);
    expect(inHead(head, 30, 48)).toBe(false);
    // Further than EDGE_STEPS (2) from the jersey it stays head, and so does the hair beside it.
    expect(inHead(head, 30, 47)).toBe(true);
    expect(inHead(head, 30, 46)).toBe(true);
    expect(inHead(head, 29, 49)).toBe(true);
  });

  it('leaves the shape whole when the skin rule finds no face (a greyscale photo)', () => {
    const { rgb, shape, colours } = setup({ grey: true });
    const head = trimHead(shape, skinMask(rgb, W, H, 3), colours);
    expect(head).toBe(shape);
  });
});

describe('faceSkinOnly', () => {
  it("keeps beside the face only the face's own skin colour: a collar trim passing the skin rule is not skin", () => {
    const rgb = photo();
    const skin = skinMask(rgb, W, H, 3);
    const shape = headShape(frontalFace(), W, H)!;
    expect(skin.data[64 * W + 35]).toBe(1); // the trim passes the colour rule
    const zone = (_x: number, y: number) => y >= 40 && y <= 80;
    const cheeks = (i: number) => {
      const x = i % W,
        y = (i - x) / W;
      return y >= shape.eyeY && y <= shape.mouthY && inHead(shape, x, y);
    };
    const only = faceSkinOnly(rgb, skin, cheeks, zone);
    expect(only.data[64 * W + 35]).toBe(0);
    expect(only.data[64 * W + 65]).toBe(0);
    expect(only.data[50 * W + 50]).toBe(1); // the face
    // Outside the zone the map is as it was.
    const far = faceSkinOnly(rgb, skin, cheeks, () => false);
    expect(far.data[64 * W + 35]).toBe(1);
  });
});

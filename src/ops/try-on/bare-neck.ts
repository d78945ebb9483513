import type { BodyGeometry } from './body.js';
import { inHead } from './head.js';
import { grainPlane, skinGrain, type Grain } from './skin-grain.js';
import { blurPlane, clamp, growFrom, median, morph, plane, threshold, type Plane } from './raster.js';

/** A chin less than this far above the shoulder line (shoulder widths): a head bent to the shoulders, whose neck is painted only inside the opening. */
const MIN_NECK = 0.15;
/** The neck's half-width: this share of the face landmarks' span (ears, eyes, nose, mouth), at most NECK_HALF_MAX shoulder widths. */
const NECK_HALF = 0.33;
const NECK_HALF_MAX = 0.18;
/** The photo's neck is measured over this many shoulder widths of rows under the chin, and used when at least MIN_MEASURED rows show it, within MEASURED_RANGE of the width the face gives. */
const MEASURE_ROWS = 0.08;
const MIN_MEASURED = 3;
const MEASURED_RANGE = 0.35;
/** The neck's centre line leans towards the shoulders' middle by at most this (dx per dy, about 20 degrees). */
const MAX_LEAN = 0.36;
/** It widens by this share towards the shoulders (the trapezius), from the chin down to the shoulder line. */
const NECK_FLARE = 0.12;
/**
 * Where it meets the shoulders it spreads out (the trapezius, then the chest): from FLARE_RISE
 * shoulder widths above the shoulder line to that line its half-width grows to half the
 * shoulders' width (with the square of the way down: a neck turns into the shoulders, not a
 * cone). That part and all below the shoulder line, down to CHEST_BELOW under it, is painted
 * only inside the neckline opening: the garment covers it elsewhere, and its front edge crosses
 * it there (no fade into the inner back: that read as a muddy band above the collar).
 */
const FLARE_RISE = 0.15;
const CHEST_BELOW = 0.6;
/** Where the photo's neck covers this share of the column's middle from the chin to the shoulder line, it shows its own neck. */
const SHOWN = 0.4;
/** The light on the neck where no skin of the photo lies above it: the jaw's shadow, this share of the face skin's colour at the chin, rising to NECK_LIT over NECK_SHADOW shoulder widths. */
const NECK_DARK = 0.72;
const NECK_LIT = 0.92;
const NECK_SHADOW = 0.2;
/** The neck's sides darken by this share (a cylinder lit from the front). */
const SIDE_DARK = 0.3;
/** Beyond the neck's sides the shoulders' skin faces the front again: its darkening falls to CHEST_DARK of the sides' over FLARE_TURN of the neck's half-width, and the whole spread part takes that level by the shoulder line. */
const CHEST_DARK = 0.35;
const FLARE_TURN = 0.6;
/** The painted neck blends into the photo's own over this much of its edge (shoulder widths, at least a pixel). */
const NECK_RIM = 0.01;
/** The sides fade over this many shoulder widths (at least a pixel). */
const SIDE_SOFT = 0.015;
/** The seam: the photo's skin above the painted neck, read over this many full-size rows per shoulder width (at least 2) above its last row, in at least SEAM_MIN of the neck's columns. */
const SEAM_ROWS = 0.015;
const SEAM_MIN = 0.3;
/** Its light across the neck (luma = m (1 + slope u), u -1..1 side to side) is at most this steep. */
const MAX_SLOPE = 0.3;
/** Below the seam its difference from that light fades over this many shoulder widths from it, averaged over the seam within SEAM_SPREAD plus half that distance. */
const SEAM_FADE = 0.08;
const SEAM_SPREAD = 0.025;
/** The seam's difference is carried from at most this many of its points. */
const SEAM_POINTS = 96;
/** A pixel the colour rule does not take for skin is still the photo's neck within this of the face's chromaticity (r and g over r + g + b) and at least this light (luma). */
const NECK_NEAR = 0.07;
const NECK_MIN_Y = 30;
/** The face's skin must cover this share of the head shape below the eyes. */
const MIN_FACE_SKIN = 0.2;
/**
 * The painted neck takes this share of the photo's skin grain (skin-grain.ts). The measure
 * also counts pores and fine wrinkles, which the noise cannot draw as such: at the whole of it
 * the paint read as speckle on grace_hopper.jpg and as mottling on the astronaut.
 */
const GRAIN_SHARE = 0.5;

/** The neck's column, working-scale pixels: centre line, half-width, rows. */
export interface NeckColumn {
  /** The rows it spans (the mouth's, down to CHEST_BELOW under the shoulder line). */
  y0: number;
  y1: number;
  /** Its centre x on row y, the neck's half-width there and the skin's, spread out towards the shoulders. */
  cx: (y: number) => number;
  half: (y: number) => number;
  wide: (y: number) => number;
  /** How far the neck has turned into the shoulders on row y: 0 above FLARE_RISE over the shoulder line, 1 at and below it. */
  spread: (y: number) => number;
  /** The shoulder line's row: below it, as beside the neck, only the opening shows the skin. */
  shoulderY: number;
  /** The chin's row, where the shadow is darkest. */
  chinY: number;
  /** Working-scale 0/1: the photo's own neck, which stays as it is (no paint over it). */
  own: Plane;
  /** The photo shows its own neck, or the head is bent to the shoulders: all of the painted one lies inside the opening. */
  shows: boolean;
  /** The head is bent to the shoulders: the photo's skin above the painted neck is the face's. */
  bent: boolean;
}

/**
 * The neck inside the new garment's neckline opening, where the photo shows none.
 * - Old clothing covers the neck up to the chin (a spacesuit's neck ring, a turtleneck): the
 *   garment's inner back was drawn from the collar to the chin, a thick band of it under the
 *   face (apollo11_crew.jpg, astronaut.png with the t-shirt). The column is painted under the chin
 *   wherever the garment leaves it, and its spread inside the opening.
 * - The photo shows its neck (SHOWN of the column's middle from the chin to the shoulder line)
 *   and a collar under it, or a head bent to the shoulders (the chin less than MIN_NECK above
 *   the shoulder line) shows none: the column is painted only inside the opening, below and
 *   beside the photo's neck (`own`). The inner back covered the rest of the opening, a bib of
 *   cloth under grace_hopper.jpg's neck inside the t-shirt's ring and the coat's V, and the
 *   lining up to messi5.jpg's chin.
 * The photo's neck is its skin (`through`, neckline.ts neckThrough) or what has the face skin's
 * chromaticity and some light (`colourAt`: working-scale pixel to RGB). Null when the skin rule
 * does not find the face (MIN_FACE_SKIN of the head shape below the eyes). The column runs down
 * from under the mouth's middle, leaning towards the shoulders' middle, NECK_HALF of the face's
 * span wide, flaring towards the shoulders; where the photo's own neck shows just under the
 * chin, as wide as it and from its middle.
 */
export function neckColumn(body: BodyGeometry, through: Plane, colourAt: (x: number, y: number) => readonly [number, number, number]): NeckColumn | null {
  const head = body.head;
  if (!head) return null;
  const sw = body.shoulderW;
  const chinY = head.chinY;
  const bent = body.shoulderY - chinY < MIN_NECK * sw;
  const { width: w, height: h } = through;
  const span = (head.x1 - head.x0) / 1.3;
  let h0 = Math.min(NECK_HALF_MAX * sw, NECK_HALF * span);
  let top = head.mouthX;
  // The photo's own neck where it shows under the chin sets the width and the middle: the
  // painted one continues it (astronaut.png's neck is wider than the face's span gives).
  const halves: number[] = [],
    mids: number[] = [];
  for (let y = Math.ceil(chinY) + 1; y <= Math.min(h - 1, chinY + MEASURE_ROWS * sw); y++) {
    const x = Math.round(top);
    if (x < 0 || x >= w || !through.data[y * w + x]) continue;
    let l = x,
      r = x;
    while (l > 0 && through.data[y * w + l - 1]) l--;
    while (r < w - 1 && through.data[y * w + r + 1]) r++;
    halves.push((r - l + 1) / 2);
    mids.push((l + r) / 2);
  }
  if (halves.length >= MIN_MEASURED) {
    h0 = clamp(median(halves), (1 - MEASURED_RANGE) * h0, (1 + MEASURED_RANGE) * h0);
    top = clamp(median(mids), top - h0, top + h0);
  }
  const bottom = (body.shoulderL.x + body.shoulderR.x) / 2;
  const down = Math.max(1, body.shoulderY - chinY);
  // Leaning towards the shoulders' middle, at most MAX_LEAN from the vertical (a bulky suit's
  // shoulder landmarks lie far off the neck), straight on past the shoulder line.
  const lean = clamp((bottom - top) / down, -MAX_LEAN, MAX_LEAN);
  const cx = (y: number) => top + lean * Math.max(0, y - chinY);
  const half = (y: number) => h0 * (1 + NECK_FLARE * clamp((y - chinY) / down, 0, 1));
  // Without the face's skin (a greyscale photo: the skin rule finds none) nothing tells a bare
  // neck from a collar, so the photo's stays (basketball1.png's neck got a second one beside it).
  let face = 0;
  const faceR: number[] = [],
    faceG: number[] = [];
  for (let y = Math.max(0, Math.ceil(head.eyeY)); y <= Math.min(h - 1, Math.floor(chinY)); y++) {
    for (let x = Math.max(0, Math.ceil(head.x0)); x <= Math.min(w - 1, Math.floor(head.x1)); x++) {
      if (!inHead(head, x, y)) continue;
      face++;
      if (!body.skin.data[y * w + x]) continue;
      const [r, g] = chromaticity(colourAt(x, y));
      faceR.push(r);
      faceG.push(g);
    }
  }
  if (faceR.length < MIN_FACE_SKIN * face) return null;
  // The photo's neck is its skin or, where the colour rule misses it (a neck in shadow, a dim
  // photo: grace_hopper.jpg at half exposure), what has the face's chromaticity and some light.
  const [fr, fg] = [median(faceR), median(faceG)];
  const neckLike = (x: number, y: number) => {
    const rgb = colourAt(x, y);
    if (0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2] < NECK_MIN_Y) return false;
    const [r, g] = chromaticity(rgb);
    return Math.hypot(r - fr, g - fg) <= NECK_NEAR;
  };
  // Where the photo shows its neck (SHOWN of the column's middle from the chin to the shoulder
  // line is its skin or neck-like), that neck is its skin and what is neck-like in the column
  // joined to it (a neck in shadow the colour rule misses). Not where it shows none: the pixels
  // mixing the chin's skin with the clothing under it are neck-like too, and were left as a
  // dark dashed line along the seam.
  let seen = 0,
    skin = 0;
  for (let y = Math.ceil(chinY); y <= Math.min(h - 1, body.shoulderY); y++) {
    const c = cx(y),
      r = 0.7 * half(y);
    for (let x = Math.max(0, Math.ceil(c - r)); x <= Math.min(w - 1, Math.floor(c + r)); x++) {
      if (inHead(head, x, y)) continue;
      seen++;
      if (through.data[y * w + x] || neckLike(x, y)) skin++;
    }
  }
  const own = plane(
    w,
    h,
    through.data.map((v) => (v ? 1 : 0)),
  );
  const shows = bent || (seen > 0 && skin >= SHOWN * seen);
  if (shows) {
    const seeds: number[] = [];
    for (let i = 0; i < w * h; i++) if (own.data[i] || inHead(head, i % w, Math.floor(i / w))) seeds.push(i);
    const inColumn = (x: number, y: number) => y >= chinY && y <= body.shoulderY && Math.abs(x - cx(y)) <= half(y) && !inHead(head, x, y);
    growFrom(seeds, w, h, w + h, (i) => inColumn(i % w, Math.floor(i / w)) && neckLike(i % w, Math.floor(i / w))).forEach((v, i) => {
      if (v) own.data[i] = 1;
    });
  }
  const y1 = Math.min(h - 1, body.shoulderY + CHEST_BELOW * sw);
  const flareY = body.shoulderY - FLARE_RISE * sw;
  const spread = (y: number) => clamp((y - flareY) / (body.shoulderY - flareY), 0, 1);
  const wide = (y: number) => half(y) + Math.max(0, sw / 2 - half(y)) * spread(y) ** 2;
  return { y0: head.mouthY, y1, cx, half, wide, spread, shoulderY: body.shoulderY, chinY, own, shows, bent };
}

/** The photo's own neck for paintBareNeck: all of it (`whole`) and its `core`, full-size 0..255. */
export interface PhotoNeck {
  whole: Plane;
  core: Plane;
}

/** NECK_RIM in full-size pixels, at least one. */
const rimOf = (sw: number, k: number) => Math.max(1, Math.round(NECK_RIM * sw * k));

/**
 * The photo's own neck (`own`, full-size 0..255) and its core: taken in by its last NECK_RIM,
 * where the painted neck blends into it. That edge mixes the skin with the clothing beside it:
 * a dashed dark line along the jaw over a black turtleneck or a suit's ring, a light rim along
 * the V of a white shirt collar (grace_hopper.jpg). `k`: full-size pixels per working pixel.
 */
export async function ownNeck(own: Plane, sw: number, k: number): Promise<PhotoNeck> {
  const rim = rimOf(sw, k);
  const inner = morph(threshold(own, 128), -rim);
  const core = await blurPlane(
    plane(
      own.width,
      own.height,
      inner.data.map((v) => v * 255),
    ),
    rim / 2,
  );
  return { whole: own, core };
}

/**
 * Full-size 0..255: how much of each pixel the column's neck covers, anti-aliased along its
 * sides over SIDE_SOFT, outside the head shape (which stays in front as the photo's). Its
 * spread, all below the shoulder line, and all of it where the photo shows its own neck, only
 * inside the neckline opening (`opening`, full-size 0..255). Inside the opening the garment
 * shows this much of the painted neck and its inner back over the rest. `k`: full-size pixels
 * per working pixel.
 */
export function neckColumnAlpha(col: NeckColumn, body: BodyGeometry, k: number, opening: Plane, width: number, height: number): Plane {
  const out = new Uint8Array(width * height);
  forColumn(col, body.shoulderW, k, opening, width, height, (i, wx, wy, cover) => {
    if (body.head && inHead(body.head, Math.floor(wx), Math.floor(wy))) return;
    out[i] = Math.round(255 * cover);
  });
  return plane(width, height, out);
}

/**
 * Paints the column's neck into `out` (full-size RGB) across its whole width (the opening's
 * plane, neckColumnAlpha, blends it with the garment). It continues the photo's skin above it
 * (the seam, neckSeam): the paint starts in the colour the photo shows just above it, and that
 * difference fades over SEAM_FADE from the seam into the neck's own light, averaged over more of
 * the seam the further it is carried (one column's pixels are noise). The neck's own light is
 * the seam's: its upper half by luma (the neck out of the jaw's shadow), darker towards the
 * sides (SIDE_DARK, a cylinder lit from the front, turning to the front again on its spread:
 * CHEST_DARK) and sloping across as the photo's light does (at most MAX_SLOPE), never past the
 * colour's brightest channel. Where
 * no skin of the photo lies above it in SEAM_MIN of its columns, the face's skin (the median of
 * the face's skin between the eyes' and the chin's rows) lit as the lower neck (NECK_LIT), in
 * the jaw's shadow under the chin (NECK_DARK rising to NECK_LIT over NECK_SHADOW); so too under
 * a head bent to the shoulders. Not over the photo's own skin (`photo`: its neck and head,
 * ownNeck; painted up to its core, so that the painted neck blends into its edge, but for a bent
 * head's) or what stays in front (`keep`: the head shape, forearms, hands), both full-size
 * 0..255, and only inside the person's outline (`inside`, 0..1); where the photo shows its own
 * neck, and on its spread and below the shoulder line, only inside the opening (`opening`,
 * full-size 0..255).
 */
export function paintBareNeck(
  out: Uint8Array,
  rgb: Uint8Array,
  channels: number,
  col: NeckColumn,
  body: BodyGeometry,
  k: number,
  photo: PhotoNeck,
  keep: Plane,
  inside: ArrayLike<number>,
  opening: Plane,
  width: number,
  height: number,
): void {
  const sw = body.shoulderW;
  // Under a head bent to the shoulders the photo's skin above is the face: the paint neither
  // blends into it nor takes its colour from the rows there, which hold the old collar's
  // (messi5.jpg's yellow trim under his chin painted the neck yellow).
  const own = col.bent ? photo.whole : photo.core;
  const share = (i: number) => (1 - own.data[i]! / 255) * (1 - keep.data[i]! / 255) * inside[i]!;
  // The seam lies where the photo's neck ends, under the rim the paint blends into.
  const seam = neckSeam(col, sw, k, rgb, channels, photo.whole, opening, (i) => share(i) > 0 && photo.whole.data[i]! < 250, width, height);
  const light = col.bent ? null : seamLight(seam, col, k);
  const colour = light?.colour ?? faceSkin(rgb, channels, body, k, width, height)?.map((v) => v / NECK_LIT);
  if (!colour) return;
  // Lit no brighter than the brightest channel allows (a clipped channel shifts the hue).
  const brightest = 255 / Math.max(1, ...colour);
  const model = (wy: number, u: number) => {
    const f = shaded(u, col.spread(wy));
    if (light) return Math.min(brightest, (1 + light.slope * clamp(u, -1, 1)) * f);
    const v = clamp((wy - col.chinY) / (NECK_SHADOW * sw), 0, 1);
    return (NECK_DARK + (NECK_LIT - NECK_DARK) * v * v * (3 - 2 * v)) * f;
  };
  // The seam's points (full-size x, y) and their difference from the model.
  const { x0, cols, top, u: seamU, rgb: seamRgb } = seam;
  const points: { x: number; y: number; diff: number[] }[] = [];
  if (light) {
    for (let q = 0; q < cols; q++) {
      const v = seamRgb[q];
      if (!v) continue;
      const f = model(col.chinY, seamU[q]!);
      points.push({ x: x0 + q + 0.5, y: top[q]!, diff: [0, 1, 2].map((c) => v[c]! - colour[c]! * f) });
    }
  }
  // At most SEAM_POINTS of them, evenly (a wide neck at full size has hundreds of columns).
  const step = Math.max(1, Math.ceil(points.length / SEAM_POINTS));
  const used = points.filter((_, n) => n % step === 0);
  const fade = Math.max(1, SEAM_FADE * sw * k),
    spread = Math.max(1, SEAM_SPREAD * sw * k);
  // The photo's grain over the painted box (forColumn's rows, the seam's columns).
  const gy0 = clamp(Math.floor(col.y0 * k), 0, height - 1),
    gy1 = clamp(Math.ceil((col.y1 + 1) * k), 0, height - 1);
  const grain = photoGrain(rgb, channels, body, k, photo.whole, seam, col, width, height);
  const noise = grain && cols > 0 && gy1 > gy0 ? grainPlane(grain, { x0, y0: gy0, x1: x0 + cols - 1, y1: gy1 }, GRAIN_SHARE) : null;
  forColumn(col, sw, k, opening, width, height, (i, _wx, wy, _cover, u) => {
    const a = share(i);
    if (a <= 0) return;
    const f = model(wy, u);
    // The seam's difference, carried into the paint as a field over the plane (not down each
    // column: the seam's columns start at different depths, and a V's side, deep below its
    // neighbours, drew a lighter stripe down the neck): the nearest seam's, fading over
    // SEAM_FADE with the distance d to it, averaged over the seam points within SEAM_SPREAD plus
    // half of d (a Gaussian of that sigma: one column's pixels are noise).
    const px = (i % width) + 0.5,
      py = Math.floor(i / width);
    let dmin = Infinity;
    for (const p of used) dmin = Math.min(dmin, (px - p.x) ** 2 + (py - p.y) ** 2);
    const sum = [0, 0, 0];
    let wsum = 0;
    if (Number.isFinite(dmin)) {
      dmin = Math.sqrt(dmin);
      const sigma = spread + dmin / 2;
      for (const p of used) {
        const w = Math.exp(-((px - p.x) ** 2 + (py - p.y) ** 2 - dmin * dmin) / (2 * sigma * sigma));
        wsum += w;
        for (let c = 0; c < 3; c++) sum[c]! += w * p.diff[c]!;
      }
    }
    const t = wsum > 0 ? Math.exp(-dmin / fade) / wsum : 0;
    const q = (i % width) - x0;
    const g = noise && q >= 0 && q < cols && py >= gy0 && py <= gy1 ? noise[(py - gy0) * cols + q]! : 0;
    for (let c = 0; c < 3; c++) {
      const v = colour[c]! * f + sum[c]! * t + g;
      out[i * 3 + c] = Math.round(out[i * 3 + c]! * (1 - a) + clamp(v, 0, 255) * a);
    }
  });
}

/**
 * The light at u across the neck (beyond -1..1 on its spread) over its middle's, `s` of the way
 * into the shoulders (NeckColumn.spread): the cylinder's, its sides' darkening falling to
 * CHEST_DARK of theirs beyond them, and to that everywhere at the shoulder line.
 */
function shaded(u: number, s: number): number {
  const a = Math.abs(u);
  const t = clamp((a - 1) / FLARE_TURN, 0, 1);
  const dark = a <= 1 ? u * u : 1 - (1 - CHEST_DARK) * t * t * (3 - 2 * t);
  return 1 - SIDE_DARK * (dark + (CHEST_DARK - dark) * s);
}

/**
 * The seam above the painted neck, per full-size column x0 + q: the first row of its last
 * painted run (or -1), u there, and the photo's skin colour above it (or null).
 */
interface NeckSeam {
  x0: number;
  cols: number;
  top: Int32Array;
  u: Float64Array;
  rgb: (number[] | null)[];
}

/**
 * The seam: in each full-size column of the neck, the first row `painted` of its last run, and
 * the mean colour of the photo's skin (`photo` >= 250) in the SEAM_ROWS rows above its rim
 * (NECK_RIM, at least the one row just above it): the rim mixes the skin with the clothing
 * below (read from the rim, grace_hopper.jpg's painted neck took the white collar's light in
 * streaks down from the V's sides; read from above the rim's top, the astronaut's took the
 * shadow under her chin).
 */
function neckSeam(
  col: NeckColumn,
  sw: number,
  k: number,
  rgb: Uint8Array,
  channels: number,
  photo: Plane,
  opening: Plane,
  painted: (i: number) => boolean,
  width: number,
  height: number,
): NeckSeam {
  const reach = col.wide(col.y1) + SIDE_SOFT * sw + 1;
  const x0 = clamp(Math.floor((Math.min(col.cx(col.y0), col.cx(col.y1)) - reach) * k), 0, width);
  const cols = clamp(Math.ceil((Math.max(col.cx(col.y0), col.cx(col.y1)) + reach) * k), 0, width) - x0;
  const top = new Int32Array(Math.max(0, cols)).fill(-1);
  const u = new Float64Array(Math.max(0, cols));
  // The last run of painted rows in the column starts there (a strip of the photo's neck under
  // the chin can lie between painted rows beside the jaw and the painted neck below it).
  const last = new Int32Array(Math.max(0, cols)).fill(-2);
  forColumn(col, sw, k, opening, width, height, (i, _wx, _wy, _cover, cu) => {
    const q = (i % width) - x0,
      py = Math.floor(i / width);
    if (q < 0 || q >= cols || !painted(i)) return;
    if (last[q] !== py - 1) {
      top[q] = py;
      u[q] = cu;
    }
    last[q] = py;
  });
  const rows = Math.max(2, Math.round(SEAM_ROWS * sw * k));
  const skip = rimOf(sw, k);
  const colours: (number[] | null)[] = [];
  for (let q = 0; q < cols; q++) {
    const sum = [0, 0, 0];
    let n = 0;
    for (let py = top[q]! - 1 - skip; top[q]! >= 0 && py >= Math.max(0, top[q]! - skip - rows); py--) {
      const i = py * width + x0 + q;
      if (photo.data[i]! < 250) continue;
      n++;
      for (let c = 0; c < 3; c++) sum[c]! += rgb[i * channels + c]!;
    }
    colours.push(n ? sum.map((v) => v / n) : null);
  }
  return { x0, cols, top, u, rgb: colours };
}

/**
 * The neck's light from its seam below the chin (the photo's neck, not the face beside a
 * narrower jaw): its colour at the middle, out of the jaw's shadow (the median of the seam's
 * upper half by luma, taken off the cylinder's sides), and the slope of its luma across (least
 * squares, at most MAX_SLOPE). Null when the photo's neck lies above less than SEAM_MIN of the
 * neck's columns.
 */
function seamLight(seam: NeckSeam, col: NeckColumn, k: number): { colour: number[]; slope: number } | null {
  const lit: { rgb: number[]; u: number; y: number }[] = [];
  seam.rgb.forEach((v, q) => {
    const f = shaded(seam.u[q]!, 0);
    if (v && Math.abs(seam.u[q]!) <= 1 && seam.top[q]! > col.chinY * k)
      lit.push({ rgb: v.map((c) => c / f), u: seam.u[q]!, y: (0.299 * v[0]! + 0.587 * v[1]! + 0.114 * v[2]!) / f });
  });
  if (lit.length < SEAM_MIN * 2 * col.half(col.chinY) * k) return null;
  const upper = [...lit].sort((a, b) => a.y - b.y).slice(Math.floor(lit.length / 2));
  const colour = [0, 1, 2].map((c) => median(upper.map((l) => l.rgb[c]!)));
  const mu = lit.reduce((a, l) => a + l.u, 0) / lit.length,
    my = lit.reduce((a, l) => a + l.y, 0) / lit.length;
  let num = 0,
    den = 0;
  for (const l of lit) {
    num += (l.u - mu) * (l.y - my);
    den += (l.u - mu) ** 2;
  }
  return { colour, slope: den > 0 && my > 0 ? clamp(num / den / my, -MAX_SLOPE, MAX_SLOPE) : 0 };
}

/**
 * Visits the full-size pixels the column covers: index, working-scale position, how much of the
 * pixel it covers (its sides anti-aliased over SIDE_SOFT; its spread, all below the shoulder
 * line, and all of it where the photo shows its own neck, only where the neckline opening,
 * full-size 0..255, is) and the position across (-1..1 side to side on the neck, beyond on its
 * spread).
 */
function forColumn(
  col: NeckColumn,
  sw: number,
  k: number,
  opening: Plane,
  width: number,
  height: number,
  visit: (i: number, wx: number, wy: number, cover: number, u: number) => void,
): void {
  const soft = Math.max(1, SIDE_SOFT * sw * k);
  for (let py = Math.max(0, Math.floor(col.y0 * k)); py <= Math.min(height - 1, Math.ceil((col.y1 + 1) * k)); py++) {
    const wy = (py + 0.5) / k;
    if (wy > col.y1) break;
    // Where the photo shows its own neck or the head is bent, nothing above the chin's row (the
    // head shape's half-ellipse leaves the chin's corners: a pixel of messi5.jpg's chin).
    if (col.shows && wy < col.chinY) continue;
    const c = col.cx(wy) * k,
      r = col.half(wy) * k,
      rw = col.wide(wy) * k;
    for (let px = Math.max(0, Math.floor(c - rw - soft)); px <= Math.min(width - 1, Math.ceil(c + rw + soft)); px++) {
      const i = py * width + px,
        d = px + 0.5 - c;
      // The neck above the shoulder line shows wherever the garment leaves it (unless the photo
      // shows its own or the head is bent: beside it the collar's back lies behind the neck);
      // its spread and all below that line only inside the opening.
      const open = opening.data[i]! > 0 ? 1 : 0;
      const neck = clamp((r - Math.abs(d)) / soft + 0.5, 0, 1) * (wy <= col.shoulderY && !col.shows ? 1 : open);
      const cover = Math.max(neck, clamp((rw - Math.abs(d)) / soft + 0.5, 0, 1) * open);
      if (cover > 0) visit(i, (px + 0.5) / k, wy, cover, d / r);
    }
  }
}

/**
 * The face's skin below the eyes, full size: the box from the eyes' row to the chin's across the
 * head shape, and whether a pixel of it is skin (inside the head shape and the skin rule, both at
 * working scale). Null without a head.
 */
function faceSkinArea(body: BodyGeometry, k: number, width: number, height: number) {
  const head = body.head;
  if (!head) return null;
  const box = {
    x0: Math.max(0, Math.floor(head.x0 * k)),
    y0: Math.max(0, Math.floor(head.eyeY * k)),
    x1: Math.min(width - 1, Math.ceil(head.x1 * k)),
    y1: Math.min(height - 1, Math.floor(head.chinY * k)),
  };
  const isSkin = (i: number) => {
    const wx = Math.floor(((i % width) + 0.5) / k),
      wy = Math.floor((Math.floor(i / width) + 0.5) / k);
    return inHead(head, wx, wy) && body.skin.data[wy * body.width + wx] === 1;
  };
  return { box, isSkin };
}

/** Median RGB of the face's skin below the eyes (full-size pixels). */
function faceSkin(rgb: Uint8Array, channels: number, body: BodyGeometry, k: number, width: number, height: number): [number, number, number] | null {
  const face = faceSkinArea(body, k, width, height);
  if (!face) return null;
  const ch: number[][] = [[], [], []];
  for (let py = face.box.y0; py <= face.box.y1; py++) {
    for (let px = face.box.x0; px <= face.box.x1; px++) {
      const i = py * width + px;
      if (!face.isSkin(i)) continue;
      for (let c = 0; c < 3; c++) ch[c]!.push(rgb[i * channels + c]!);
    }
  }
  if (!ch[0]!.length) return null;
  return [median(ch[0]!), median(ch[1]!), median(ch[2]!)];
}

/** r and g over r + g + b: the colour without its light. */
function chromaticity(rgb: readonly [number, number, number]): [number, number] {
  const sum = rgb[0] + rgb[1] + rgb[2] || 1;
  return [rgb[0] / sum, rgb[1] / sum];
}

/**
 * The grain of the photo's skin (skin-grain.ts), for the painted neck: its own neck's (`own`
 * >= 250, full-size), between the chin's row and the seam's lowest row, or where too little of
 * it lies inside that (the astronaut's strip of skin under the chin: its shadow's edge was read
 * as grain, and painted coarse mottling) the face's skin below the eyes. Null when neither has
 * enough.
 */
function photoGrain(
  rgb: Uint8Array,
  channels: number,
  body: BodyGeometry,
  k: number,
  own: Plane,
  seam: NeckSeam,
  col: NeckColumn,
  width: number,
  height: number,
): Grain | null {
  let bottom = -1;
  for (const t of seam.top) bottom = Math.max(bottom, t);
  const chin = Math.max(0, Math.ceil(col.chinY * k));
  if (bottom > chin && seam.cols > 0) {
    const neck = skinGrain(rgb, channels, (i) => own.data[i]! >= 250, { x0: seam.x0, y0: chin, x1: seam.x0 + seam.cols - 1, y1: bottom - 1 }, width);
    if (neck) return neck;
  }
  const face = faceSkinArea(body, k, width, height);
  return face && skinGrain(rgb, channels, face.isSkin, face.box, width);
}

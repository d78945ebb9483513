/**
 * Colour evidence on a plain backdrop: the parts of a subject the model left out, or half-decided,
 * although their colour is nothing like the backdrop's (round 13, issue 32; docs/ops/remove-background.md).
 *
 * Seen on frame-filling subjects over a plain or studio backdrop: ISNet leaves a large flat or
 * dark part of the subject out (a basketball's seams and half its surface, a crown's lower band,
 * a cartoon fish's tail), as if it were backdrop, or gives it half values. When the backdrop is one
 * colour, the photo itself says otherwise:
 *  - a region the model left out, whose colour is far from the backdrop's and which is enclosed by
 *    the subject (its outline runs along the subject, or the frame, and hardly along the
 *    backdrop), is part of the subject;
 *  - so is a region of half values inside the subject whose colour is far from the backdrop's.
 * Colours are compared with a shadow model (backdropDistance), so a cast shadow on the backdrop is
 * the backdrop's colour.
 *
 * The rule only adds, and only where it has that evidence: the backdrop must be plain (most of
 * what the model calls backdrop is near one colour, and smooth), the added region must differ from
 * it clearly and be more than a speck. A second object on the backdrop, a table under a product or
 * a floor, borders the backdrop along most of its outline and is left alone, and so is the model's
 * soft halo over it. A busy backdrop turns the rule off.
 */
import { dilate, labelRegions } from './cleanup.js';
import { analysisGrid, blockColumns, blockMeans, type BlockMeans } from './colours.js';

export interface BackdropColourParams {
  /** Longest side of the analysis grid. */
  side: number;
  /** Below this mask value (0..255) a block counts as backdrop for the colour estimate. */
  backdropBelow: number;
  /** RMS distance over RGB within which a backdrop block is the backdrop's median colour (the plainness test). */
  near: number;
  /** A block the model left out is a candidate when its backdropDistance is beyond this (clearly not the backdrop). */
  far: number;
  /** A pixel's opacity from its backdropDistance: 0 at the first, 1 at the second. */
  ramp: readonly [number, number];
  /** The backdrop is plain when at least this share of its blocks lies within `near` of its median colour (a studio sweep's gradient keeps about half), */
  plainShare: number;
  /** ...and at least this share is smooth: */
  smoothShare: number;
  /** ...no step to the next block (right, below) larger than this (RGB distance). */
  smoothStep: number;
  /** A region is added when at least this share of its outline (frame edges aside) borders the subject, */
  enclosed: number;
  /** ...and it covers at least this share of the frame (smaller ones are specks of texture or edge). */
  minArea: number;
  /** Darker than this share of the backdrop's lightness is not a shadow of it (backdropDistance). */
  shadowFloor: number;
}

export const DEFAULT_BACKDROP_COLOUR: BackdropColourParams = {
  side: 256,
  backdropBelow: 26,
  near: 16,
  far: 75,
  ramp: [40, 75],
  plainShare: 0.45,
  smoothShare: 0.75,
  smoothStep: 8,
  enclosed: 0.7,
  minArea: 0.002,
  shadowFloor: 0.35,
};

/**
 * How unlike the backdrop colour `ref` (RGB) a colour is, in 0..255 levels, with a shadow model:
 * a shadow is the backdrop's colour scaled down, so the colour is compared with the backdrop
 * scaled to its own lightness, and lightness counts only when brighter than the backdrop or
 * darker than `shadowFloor` of it (deeper than a cast shadow on a lit backdrop goes).
 */
export function backdropDistance(r: number, g: number, b: number, ref: readonly number[], shadowFloor: number): number {
  const lb = (ref[0]! + ref[1]! + ref[2]!) / 3 || 1;
  const l = (r + g + b) / 3;
  const s = Math.min(1, l / lb);
  const dr = r - s * ref[0]!,
    dg = g - s * ref[1]!,
    db = b - s * ref[2]!;
  const chroma = Math.sqrt(dr * dr + dg * dg + db * db);
  const light = l > lb ? l - lb : l < shadowFloor * lb ? shadowFloor * lb - l : 0;
  // Math.hypot(chroma, 0) is chroma exactly; skipping the call there is the same value, faster.
  return light === 0 ? chroma : Math.hypot(chroma, light);
}

/**
 * Means of f x f blocks of a one-channel plane. Integer sums (exact, as the float32 sums they
 * replace were for f <= 256) walked a block row at a time, each block's pixel count from its
 * place, so the values are the same without a division per pixel.
 */
function blockMean1(plane: Uint8Array, w: number, h: number, f: number, lw: number, lh: number): Float32Array {
  const sums = new Uint32Array(lw * lh);
  for (let y = 0; y < h; y++) {
    let k = ((y / f) | 0) * lw;
    let i = y * w;
    for (let x0 = 0; x0 < w; x0 += f, k++) {
      const x1 = Math.min(w, x0 + f);
      let s = 0;
      for (let x = x0; x < x1; x++, i++) s += plane[i]!;
      sums[k]! += s;
    }
  }
  const means = new Float32Array(lw * lh);
  for (let by = 0, k = 0; by < lh; by++) {
    const rows = Math.min(h, (by + 1) * f) - by * f;
    for (let bx = 0; bx < lw; bx++, k++) means[k] = sums[k]! / (rows * (Math.min(w, (bx + 1) * f) - bx * f));
  }
  return means;
}

/** RGB distance between blocks k and j of interleaved block means. */
function colourStep(rgb: Float32Array, k: number, j: number): number {
  const dr = rgb[k * 3]! - rgb[j * 3]!,
    dg = rgb[k * 3 + 1]! - rgb[j * 3 + 1]!,
    db = rgb[k * 3 + 2]! - rgb[j * 3 + 2]!;
  return Math.sqrt(dr * dr + dg * dg + db * db);
}

/** Median of one channel of the listed blocks, to a level (a histogram, not a sort). */
function channelMedian(rgb: Float32Array, blocks: number[], c: number): number {
  const hist = new Uint32Array(256);
  for (const k of blocks) hist[Math.min(255, Math.round(rgb[k * 3 + c]!))]!++;
  for (let v = 0, seen = 0; v < 256; v++) {
    seen += hist[v]!;
    if (2 * seen > blocks.length) return v;
  }
  return 255;
}

export interface BackdropColourResult {
  /** The mask with the added regions (a new array), or the input when nothing was added. */
  mask: Uint8Array;
  /** Share of the frame added. */
  added: number;
  /** Shares of the backdrop's blocks near its median colour and smooth (undefined: too little backdrop or subject to tell). */
  plain?: { colour: number; smooth: number };
  /** The image's block means on the rule's grid (`side`), for the next rule on the same grid (hole-colour.ts). */
  means: BlockMeans;
}

/** What the model calls backdrop, on the rule's grid: its median colour and whether it is plain. */
export interface PlainBackdrop {
  /** The backdrop's median colour (RGB) over the blocks below `backdropBelow`. */
  ref: number[];
  /** Shares of the backdrop's blocks near `ref` and smooth (undefined: too little backdrop or subject to tell). */
  plain?: { colour: number; smooth: number };
  /** Both shares reach the params' plainShare and smoothShare. */
  isPlain: boolean;
  /** The mask's and the image's block means on the grid. */
  maskLow: Float32Array;
  means: BlockMeans;
  f: number;
  lw: number;
  lh: number;
}

/**
 * The backdrop's colour and plainness: the median colour of the blocks `mask` calls backdrop, and
 * whether most of them are near it (lightness included: a textured backdrop's light and dark parts
 * share a hue but are not one colour) and smooth (little step to the next block). Shared by the
 * colour rule below and the frame pad (frame-pad.ts).
 */
export function plainBackdrop(
  mask: Uint8Array,
  image: { data: Uint8Array; channels: number },
  w: number,
  h: number,
  p: BackdropColourParams = DEFAULT_BACKDROP_COLOUR,
): PlainBackdrop {
  const { f, lw, lh } = analysisGrid(w, h, p.side);
  const n = lw * lh;
  const rgb = blockMeans(image, w, h, f, lw, lh);
  const means = { side: p.side, rgb };
  const maskLow = blockMean1(mask, w, h, f, lw, lh);
  const back: number[] = [];
  let subject = 0;
  for (let k = 0; k < n; k++) {
    if (maskLow[k]! < p.backdropBelow) back.push(k);
    else if (maskLow[k]! >= 128) subject++;
  }
  const grid = { maskLow, means, f, lw, lh };
  if (back.length < 0.05 * n || subject < 0.01 * n) return { ref: [0, 0, 0], isPlain: false, ...grid };
  const ref = [0, 1, 2].map((c) => channelMedian(rgb, back, c));
  // Plain: most of the backdrop is its median colour, lightness included.
  let near = 0;
  for (const k of back) {
    const dr = rgb[k * 3]! - ref[0]!,
      dg = rgb[k * 3 + 1]! - ref[1]!,
      db = rgb[k * 3 + 2]! - ref[2]!;
    if (Math.sqrt((dr * dr + dg * dg + db * db) / 3) <= p.near) near++;
  }
  // Smooth: most backdrop blocks differ little from their neighbours (no texture at block scale).
  let smooth = 0;
  for (const k of back) {
    const x = k % lw;
    // The steps to the right and lower neighbours (no array per block: this runs on every backdrop block).
    let g = 0;
    if (x + 1 < lw) g = Math.max(g, colourStep(rgb, k, k + 1));
    if (k + lw < n) g = Math.max(g, colourStep(rgb, k, k + lw));
    if (g < p.smoothStep) smooth++;
  }
  const plain = { colour: near / back.length, smooth: smooth / back.length };
  return { ref, plain, isPlain: plain.colour >= p.plainShare && plain.smooth >= p.smoothShare, ...grid };
}

/**
 * Adds to `mask` the regions the colour evidence above says are subject. `image`: interleaved,
 * 3 or 4 channels, width*height.
 */
export function addByBackdropColour(
  mask: Uint8Array,
  image: { data: Uint8Array; channels: number },
  w: number,
  h: number,
  p: BackdropColourParams = DEFAULT_BACKDROP_COLOUR,
): BackdropColourResult {
  const { plain, isPlain, ref, maskLow, means, f, lw, lh } = plainBackdrop(mask, image, w, h, p);
  if (!isPlain) return { mask, added: 0, plain, means };
  const rgb = means.rgb;
  const n = lw * lh;
  const dist = new Float32Array(n);
  for (let k = 0; k < n; k++) dist[k] = backdropDistance(rgb[k * 3]!, rgb[k * 3 + 1]!, rgb[k * 3 + 2]!, ref, p.shadowFloor);

  // Candidates: what the model left out (below half) that is clearly not the backdrop's colour.
  const cand = new Uint8Array(n);
  for (let k = 0; k < n; k++) if (maskLow[k]! < 128 && dist[k]! > p.far) cand[k] = 255;
  const { labels, areas } = labelRegions(cand, lw, lh);
  const bySubject = new Float64Array(areas.length);
  const byBackdrop = new Float64Array(areas.length);
  for (let y = 0, k = 0; y < lh; y++) {
    for (let x = 0; x < lw; x++, k++) {
      const l = labels[k]!;
      if (!l) continue;
      const look = (j: number) => {
        if (labels[j] === l) return;
        if (maskLow[j]! >= 128) bySubject[l]!++;
        else if (!labels[j]) byBackdrop[l]!++;
      };
      if (x > 0) look(k - 1);
      if (x + 1 < lw) look(k + 1);
      if (y > 0) look(k - lw);
      if (y + 1 < lh) look(k + lw);
    }
  }
  const accept = new Uint8Array(areas.length);
  for (let l = 1; l < areas.length; l++) {
    const s = bySubject[l]!,
      b = byBackdrop[l]!;
    if (s > 0 && s >= p.enclosed * (s + b) && areas[l]! >= p.minArea * n) accept[l] = 1;
  }

  // Where the opacity may rise, at block level:
  //  - an accepted region and the blocks next to it (its edge);
  //  - a half-decided region inside the subject: blocks the model gives some weight but not full
  //    (backdropBelow..229), clearly not the backdrop's colour, joined to the subject, not next to
  //    the backdrop (the model's soft edge there is the outline's, which the edge refinement
  //    draws) nor to something else the model left out that is not the backdrop's colour either
  //    (a floor or table of another colour: the model's soft halo over it is not the subject's),
  //    and no speck (minArea).
  const reach = new Uint8Array(n);
  for (let k = 0; k < n; k++) if (maskLow[k]! >= p.backdropBelow || accept[labels[k]!]) reach[k] = 255;
  const joined = labelRegions(reach, lw, lh);
  const withSubject = new Uint8Array(joined.areas.length);
  for (let k = 0; k < n; k++) if (maskLow[k]! >= 128 || accept[labels[k]!]) withSubject[joined.labels[k]!] = 1;
  const outside = new Uint8Array(n);
  for (let k = 0; k < n; k++) if (!accept[labels[k]!] && (labels[k] || maskLow[k]! < p.backdropBelow)) outside[k] = 1;
  const nearOutside = dilate(outside, lw, lh, 2);
  const half = new Uint8Array(n);
  for (let k = 0; k < n; k++) {
    const v = maskLow[k]!;
    if (v >= p.backdropBelow && v < 230 && dist[k]! > p.far && withSubject[joined.labels[k]!] && !nearOutside[k]) half[k] = 255;
  }
  const halves = labelRegions(half, lw, lh);
  const open = new Uint8Array(n);
  for (let k = 0; k < n; k++) {
    if (accept[labels[k]!]) open[k] = 1;
    if (halves.labels[k] && halves.areas[halves.labels[k]!]! >= p.minArea * n) open[k] = 1;
  }
  const grown = dilate(open, lw, lh, 1);
  // At full resolution each such pixel takes its own colour's evidence: its distance from the
  // backdrop ramped over `ramp`; opacity only rises.
  const [lo, hi] = p.ramp;
  const out = mask.slice();
  const c = image.channels;
  let added = 0;
  const col = blockColumns(w, f);
  for (let y = 0, i = 0; y < h; y++) {
    const row = ((y / f) | 0) * lw;
    for (let x = 0; x < w; x++, i++) {
      if (!grown[row + col[x]!] || out[i] === 255) continue;
      const j = i * c;
      const d = backdropDistance(image.data[j]!, image.data[j + 1]!, image.data[j + 2]!, ref, p.shadowFloor);
      const a = Math.round(255 * Math.min(1, Math.max(0, (d - lo) / (hi - lo))));
      if (a > out[i]!) {
        out[i] = a;
        added++;
      }
    }
  }
  return { mask: out, added: added / (w * h), plain, means };
}

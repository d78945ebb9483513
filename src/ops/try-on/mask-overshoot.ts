import { gaussianBlurKernel } from '../../media/filters.js';
import { padBox } from './raster.js';

/** The outline is re-judged this deep inside it (shoulder widths, at least 2 px). */
const DEPTH = 0.08;
/** Only pieces reaching this deep into the outline (shoulder widths, at least MIN_DEEP_PX) are taken back. */
const MIN_DEEP = 0.012;
const MIN_DEEP_PX = 2.5;
/** The edge it makes is smoothed over this (pixels per 1000 of the photo's width, at least SOFT_PX): the outline's own softness (pipeline softMask). */
const SOFT = 0.67;
const SOFT_PX = 0.6;
/** The smoothing works tile by tile, this many pixels square. */
const TILE = 64;

/** Past DEPTH the walk goes on only through the cut-out's alpha below this (0..255). */
const SURE = 16;
/** The cut-out holds the dressed person when it covers this share of the torso's core (cutHoldsTorso). */
const HOLDS_TORSO = 0.95;

/**
 * BlazePose's mask takes in backdrop beside the person, most in the concave corners between the
 * neck and the shoulders, which its 256-pixel crop rounds off: grace_hopper.jpg's left shoulder
 * took in 0.06 shoulder widths of the flag's gold fringe, the astronaut's a strip of the flag's
 * stripes, and every garment was drawn over them up to the mask's edge (outlineMatte only ever
 * raises the mask, and the backdrop rule at the garment's edge, edge-backdrop.ts, reaches 2 px
 * and not over a textured backdrop). The subject cut-out (`cut`, full-size 0..255: ISNet,
 * refined at full resolution, vision/cutout) follows the photo's edge there.
 *
 * Within DEPTH shoulder widths inside the outline (`inside`, full-size 0..1, lowered in place),
 * the cut-out's backdrop (below 128) is taken back where it joins the outside, in pieces that
 * reach MIN_DEEP into the outline (a line a pixel deep along it is the two masks' usual
 * disagreement at the edge, not backdrop taken in). There, and on the pixels beside those
 * pieces, the outline is no more than the cut-out's alpha (its anti-aliased edge), smoothed
 * over SOFT as the outline's own softness. Deeper in,
 * the cut-out's word alone is not taken: it may drop a part of the person a segmentation model
 * does not take for the subject, and a garment would stop short of the old clothing there
 * (basketball1.png's dark shirt beside his raised forearm, which ISNet half gives to the dark
 * doorway). `keep`
 * (full-size index) marks what is never taken back: the head, hands and forearms.
 *
 * With `beyond`, the walk goes on past DEPTH through the pixels the cut-out is sure are backdrop
 * (alpha below SURE); the caller gives it when the cut-out holds the person (cutHoldsTorso).
 * BlazePose's mask can spread far over the backdrop: on grace_hopper.jpg enlarged to 2560 x 3000
 * it took in the flag 0.3 shoulder widths beside her left shoulder (ISNet's alpha under 16 on
 * 94% of it), and the band alone left a cross of garment standing on it. Beside basketball1.png's
 * raised forearm ISNet is unsure of the dark shirt (under 16 on 1%), and the walk stops there.
 * Returns whether the outline changed.
 */
export function trimOvershoot(
  cut: Uint8Array,
  inside: Float32Array,
  keep: (i: number) => boolean,
  shoulderW: number,
  width: number,
  height: number,
  beyond = false,
): boolean {
  const depth = Math.max(2, DEPTH * shoulderW);
  const deep = Math.max(MIN_DEEP_PX, MIN_DEEP * shoulderW);
  const n = width * height;
  const isIn = (i: number) => inside[i]! >= 0.5;
  // 1: a candidate (inside the outline, backdrop to the cut-out, not kept), then the layer + 1
  // at which the walk in from the outline reached it (4 neighbours, up to `depth` layers: the
  // band is only as deep as that). Only pixels the two masks disagree on are visited. Steps
  // along the rows and columns, not the diagonals: a diagonal step counted as one made a sliver
  // 4.2 px deep 4 layers deep, under MIN_DEEP at 344 px shoulders (the fringe's left end above
  // grace_hopper's shoulder).
  const layer = new Uint16Array(n);
  let front: number[] = [];
  for (let y = 0; y < height; y++) {
    for (let x = 0, i = y * width; x < width; x++, i++) {
      if (!isIn(i) || cut[i]! >= 128) continue;
      // The picture's border is not outside: the person goes on beyond it.
      const edge = (x > 0 && !isIn(i - 1)) || (x < width - 1 && !isIn(i + 1)) || (y > 0 && !isIn(i - width)) || (y < height - 1 && !isIn(i + width));
      if (keep(i)) continue;
      layer[i] = 1;
      if (edge) {
        layer[i] = 2;
        front.push(i);
      }
    }
  }
  if (!front.length) return false;
  const reached: number[] = [...front];
  for (let d = 2; front.length && (d <= depth || beyond); d++) {
    const next: number[] = [];
    for (const i of front) {
      const x = i % width;
      for (const q of [x > 0 ? i - 1 : -1, x < width - 1 ? i + 1 : -1, i - width, i + width]) {
        if (q < 0 || q >= n || layer[q] !== 1) continue;
        if (d > depth && cut[q]! >= SURE) continue;
        layer[q] = Math.min(65535, d + 1);
        next.push(q);
      }
    }
    reached.push(...next);
    front = next;
  }
  // The pieces the walk reached (4-connected), each taken back when it reaches `deep` layers.
  const taken = new Uint8Array(n); // 1: being grouped, 2: taken back, 3: too shallow
  for (const i0 of reached) {
    if (taken[i0]) continue;
    const piece = [i0];
    taken[i0] = 1;
    let most = layer[i0]! - 1;
    for (let k = 0; k < piece.length; k++) {
      const i = piece[k]!;
      const x = i % width;
      for (const q of [x > 0 ? i - 1 : -1, x < width - 1 ? i + 1 : -1, i - width, i + width]) {
        if (q < 0 || q >= n || taken[q] || layer[q]! < 2) continue;
        taken[q] = 1;
        most = Math.max(most, layer[q]! - 1);
        piece.push(q);
      }
    }
    const mark = most >= deep ? 2 : 3;
    for (const i of piece) taken[i] = mark;
  }
  // The cut-out's alpha, as the outline takes the mask's (pipeline personEdge), on the pieces
  // and the pixels inside beside them; smoothed (SOFT) so the edge it makes is anti-aliased as
  // the outline's own: the refined alpha is near binary along a textured backdrop, and the
  // garment's edge came out in stair steps.
  const limits = new Map<number, number>();
  const limitAt = (i: number) => {
    const t = Math.min(1, Math.max(0, (cut[i]! - 90) / 75));
    limits.set(i, t * t * (3 - 2 * t));
  };
  for (const i of reached) {
    if (taken[i] !== 2) continue;
    limitAt(i);
    const x = i % width;
    for (const q of [x > 0 ? i - 1 : -1, x < width - 1 ? i + 1 : -1, i - width, i + width])
      if (q >= 0 && q < n && taken[q] !== 2 && !limits.has(q) && isIn(q) && !keep(q)) limitAt(q);
  }
  if (!limits.size) return false;
  let x0 = width,
    y0 = height,
    x1 = -1,
    y1 = -1;
  for (const i of limits.keys()) {
    const x = i % width,
      y = (i - x) / width;
    if (x < x0) x0 = x;
    if (x > x1) x1 = x;
    if (y < y0) y0 = y;
    if (y > y1) y1 = y;
  }
  // Smoothed over their box and a margin of 4 sigma.
  const sigma = Math.max(SOFT_PX, (SOFT * width) / 1000);
  const m = Math.ceil(4 * sigma) + 1;
  const box = padBox({ x0, y0, x1, y1 }, m, width, height);
  ({ x0, y0 } = box);
  const { w, h } = box;
  const limit = new Float32Array(w * h).fill(1);
  for (const [i, v] of limits) {
    const x = i % width,
      y = (i - x) / width;
    limit[(y - y0) * w + x - x0] = v;
  }
  // Tile by tile, only the tiles holding a limited pixel (the box is most of the person's: the
  // whole of it blurred took a third of a second at 3000 px).
  const tiles = new Set<number>();
  const tw = Math.ceil(w / TILE);
  for (const i of limits.keys()) {
    const x = (i % width) - x0,
      y = Math.floor(i / width) - y0;
    tiles.add(Math.floor(y / TILE) * tw + Math.floor(x / TILE));
  }
  let changed = false;
  for (const t of tiles) {
    const tx0 = (t % tw) * TILE,
      ty0 = Math.floor(t / tw) * TILE;
    const tx1 = Math.min(w - 1, tx0 + TILE - 1),
      ty1 = Math.min(h - 1, ty0 + TILE - 1);
    const rx0 = Math.max(0, tx0 - m),
      ry0 = Math.max(0, ty0 - m),
      rx1 = Math.min(w - 1, tx1 + m),
      ry1 = Math.min(h - 1, ty1 + m);
    const rw = rx1 - rx0 + 1,
      rh = ry1 - ry0 + 1;
    const region = new Float32Array(rw * rh);
    for (let y = 0; y < rh; y++) region.set(limit.subarray((y + ry0) * w + rx0, (y + ry0) * w + rx0 + rw), y * rw);
    const soft = gaussianBlurKernel(region, rw, rh, sigma);
    for (let y = ty0; y <= ty1; y++) {
      for (let x = tx0; x <= tx1; x++) {
        const j = y * w + x,
          i = (y + y0) * width + x + x0;
        // (The blur of a plane of ones is a rounding under one: left as one.)
        const sv = soft[(y - ry0) * rw + x - rx0]!;
        const v = Math.min(limit[j]!, sv > 0.999 ? 1 : sv);
        if (v >= inside[i]! || !isIn(i) || keep(i)) continue;
        inside[i] = v;
        changed = true;
      }
    }
  }
  return changed;
}

/**
 * Whether the cut-out (full-size 0..255) holds the person whose landmarks are given: it covers
 * HOLDS_TORSO of the torso's core, a grid over the shoulders-to-hips quadrilateral 15% in from
 * each side (inside the picture). A cut-out of another subject, or of only part of a group,
 * leaves it out.
 */
export function cutHoldsTorso(cut: Uint8Array, landmarks: ReadonlyArray<{ x: number; y: number }>, width: number, height: number): boolean {
  const [sl, sr, hl, hr] = [11, 12, 23, 24].map((i) => landmarks[i]!);
  let n = 0,
    held = 0;
  for (let a = 0.15; a <= 0.851; a += 0.05) {
    const top = { x: sl!.x + (sr!.x - sl!.x) * a, y: sl!.y + (sr!.y - sl!.y) * a };
    const bottom = { x: hl!.x + (hr!.x - hl!.x) * a, y: hl!.y + (hr!.y - hl!.y) * a };
    for (let b = 0.15; b <= 0.851; b += 0.05) {
      const x = Math.round(top.x + (bottom.x - top.x) * b),
        y = Math.round(top.y + (bottom.y - top.y) * b);
      if (x < 0 || y < 0 || x >= width || y >= height) continue;
      n++;
      if (cut[y * width + x]! >= 128) held++;
    }
  }
  return n > 0 && held / n >= HOLDS_TORSO;
}

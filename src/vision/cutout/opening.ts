/**
 * A backdrop object standing in the subject's opening (issue 19, round 10).
 *
 * Both models take a vivid backdrop object seen through a gap in the subject as part of it: a
 * blue clothes-peg standing in a plant, visible inside the arc of white headphones between the
 * headband and a cup (ISNet 0.95, U2-Net-p 0.96 on it). A person sees that it is behind: it is a
 * colour found nowhere else in the subject, and the backdrop shows on both sides of it within
 * the arc's opening. Colour alone also takes true parts (tea in a cup, a trophy's plinth, a gem,
 * a t-shirt's print: round 9); what those do not do is border the backdrop only inside the
 * subject's opening. Tea, prints and jewels are enclosed by the subject (no backdrop next to
 * them); a plinth, a hanging gem, a cherry's stem or a bag's handle border the backdrop on the
 * outside of the rest of the subject. So a region is dropped when
 *  - its colour is rare in the rest of the cut-out,
 *  - a real share of its outline borders the backdrop, and
 *  - (nearly) all of that border lies inside the convex hull of the rest of the cut-out, and
 *  - it borders at least two separate pieces of that opening: it stands across the opening, with
 *    the backdrop on both sides (a part hanging at the subject's edge, an earring's gem, borders
 *    one piece).
 * Only for a cut-out inside the picture (touchesFrame). Everything runs at the fusion's analysis
 * resolution (fusion.ts).
 */
import { distanceToSeeds, labelRegions } from './cleanup.js';

export interface OpeningParams {
  /** Neighbouring blocks whose colours differ by less than this (sum of |dR|+|dG|+|dB|) are one colour region. */
  joinTolerance: number;
  /** A region is grown through the mask's pixels within this colour distance (L1) of its mean. */
  colourDistance: number;
  /** Only regions between these shares of the cut-out are judged. */
  minShare: number;
  maxShare: number;
  /** At most this share of the rest of the cut-out (away from the region) may be within colourDistance of its colour. */
  rareShare: number;
  /** At least this share of the region's outline borders the backdrop (not enclosed by the subject)... */
  openShare: number;
  /** ...at least this share of that border lies inside the convex hull of the rest of the cut-out... */
  insideShare: number;
  /** ...and it borders at least this many separate pieces of that opening (it stands across it). */
  minSides: number;
  /** Slivers of the rest thinner than about twice this (blocks), next to a dropped region, go with it. */
  sliver: number;
}

// Chosen on the bench's evaluation set (bench/remove-background-peg-probe.mjs); docs/ops/remove-background.md, round 10.
export const DEFAULT_OPENING: OpeningParams = {
  joinTolerance: 24,
  colourDistance: 60,
  minShare: 0.05,
  maxShare: 0.45,
  rareShare: 0.1,
  openShare: 0.15,
  insideShare: 0.9,
  minSides: 2,
  sliver: 2,
};

/** A judged region (analysis resolution); `describe` and the pixel list are for the bench probe. */
export interface OpeningRegion {
  /** Pixel indices at analysis resolution. */
  pixels: number[];
  drop: boolean;
  describe: string;
}

const colourDist = (c: Float32Array, i: number, m: readonly number[]) =>
  Math.abs(c[i * 3] - m[0]) + Math.abs(c[i * 3 + 1] - m[1]) + Math.abs(c[i * 3 + 2] - m[2]);

/**
 * 4-connected flood fill from `seeds`, entering a pixel j from its neighbour i when `enter(i, j)`;
 * `mark` (1 = taken) is updated in place. Returns the pixels taken, seeds first.
 */
function flood(seeds: number[], mark: Uint8Array, w: number, enter: (i: number, j: number) => boolean): number[] {
  const n = mark.length;
  const px = seeds.slice();
  for (const i of seeds) mark[i] = 1;
  const take = (i: number, j: number) => {
    if (mark[j] || !enter(i, j)) return;
    mark[j] = 1;
    px.push(j);
  };
  for (let q = 0; q < px.length; q++) {
    const i = px[q];
    const x = i % w;
    if (x > 0) take(i, i - 1);
    if (x < w - 1) take(i, i + 1);
    if (i >= w) take(i, i - w);
    if (i + w < n) take(i, i + w);
  }
  return px;
}

/**
 * Colour regions of the cut-out: a flood fill over `inside` while neighbouring block colours
 * differ by less than `tol`. Returns the regions' pixel lists.
 */
function colourRegions(inside: Uint8Array, colours: Float32Array, w: number, tol: number): number[][] {
  const seen = new Uint8Array(inside.length);
  const similar = (i: number, j: number) =>
    inside[j] === 1 &&
    Math.abs(colours[i * 3] - colours[j * 3]) + Math.abs(colours[i * 3 + 1] - colours[j * 3 + 1]) + Math.abs(colours[i * 3 + 2] - colours[j * 3 + 2]) < tol;
  const out: number[][] = [];
  for (let s = 0; s < inside.length; s++) if (inside[s] && !seen[s]) out.push(flood([s], seen, w, similar));
  return out;
}

function meanColour(px: number[], colours: Float32Array): number[] {
  const m = [0, 0, 0];
  for (const i of px) for (let c = 0; c < 3; c++) m[c] += colours[i * 3 + c];
  return m.map((v) => v / Math.max(1, px.length));
}

/** The region grown from `seed` through the cut-out's pixels within `d` of `mean` (a colour region split by shading is one part). */
function growByColour(seed: number[], mean: number[], inside: Uint8Array, colours: Float32Array, w: number, d: number): number[] {
  return flood(seed, new Uint8Array(inside.length), w, (_i, j) => inside[j] === 1 && colourDist(colours, j, mean) < d);
}

/** Convex hull (monotone chain) of `m`'s pixels, from each row's outermost two. */
function rowHull(m: Uint8Array, w: number, h: number): [number, number][] {
  const pts: [number, number][] = [];
  for (let y = 0; y < h; y++) {
    let x0 = -1,
      x1 = -1;
    for (let x = 0, i = y * w; x < w; x++, i++) {
      if (!m[i]) continue;
      if (x0 < 0) x0 = x;
      x1 = x;
    }
    if (x0 >= 0) pts.push([x0, y], [x1, y]);
  }
  pts.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const cross = (o: [number, number], a: [number, number], b: [number, number]) => (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
  const lower: [number, number][] = [];
  const upper: [number, number][] = [];
  for (const p of pts) {
    while (lower.length >= 2 && cross(lower[lower.length - 2], lower[lower.length - 1], p) <= 0) lower.pop();
    lower.push(p);
  }
  for (let k = pts.length - 1; k >= 0; k--) {
    const p = pts[k];
    while (upper.length >= 2 && cross(upper[upper.length - 2], upper[upper.length - 1], p) <= 0) upper.pop();
    upper.push(p);
  }
  return lower.slice(0, -1).concat(upper.slice(0, -1));
}

/** The hull's span on each row: [left, right] (right < left where the row misses it). */
function hullRows(hull: [number, number][], h: number): { left: Float64Array; right: Float64Array } {
  const left = new Float64Array(h).fill(Infinity);
  const right = new Float64Array(h).fill(-Infinity);
  for (let k = 0; k < hull.length; k++) {
    const [ax, ay] = hull[k];
    const [bx, by] = hull[(k + 1) % hull.length];
    const [y0, y1] = [Math.ceil(Math.min(ay, by)), Math.floor(Math.max(ay, by))];
    for (let y = Math.max(0, y0); y <= Math.min(h - 1, y1); y++) {
      const x = ay === by ? Math.min(ax, bx) : ax + ((bx - ax) * (y - ay)) / (by - ay);
      const x2 = ay === by ? Math.max(ax, bx) : x;
      if (x < left[y]) left[y] = x;
      if (x2 > right[y]) right[y] = x2;
    }
  }
  return { left, right };
}

/**
 * Judges one rare-colour region: the share of its outline on the backdrop, the share of that
 * border inside the convex hull of the rest of the cut-out, and how many separate pieces of that
 * opening it borders (openingSides).
 */
function judge(px: number[], inside: Uint8Array, w: number, h: number): { open: number; insideOpen: number; sides: number } {
  const inR = new Uint8Array(inside.length);
  for (const i of px) inR[i] = 1;
  const rest = new Uint8Array(inside.length);
  for (let i = 0; i < inside.length; i++) rest[i] = inside[i] && !inR[i] ? 1 : 0;
  const hull = hullRows(rowHull(rest, w, h), h);
  const inHull = (j: number) => {
    const x = j % w,
      y = (j / w) | 0;
    return x >= hull.left[y] && x <= hull.right[y];
  };
  let outline = 0,
    open = 0,
    insideOpen = 0;
  for (const i of px) {
    const x = i % w,
      y = (i / w) | 0;
    const nb = [x > 0 ? i - 1 : -1, x < w - 1 ? i + 1 : -1, y > 0 ? i - w : -1, y < h - 1 ? i + w : -1];
    if (nb.every((j) => j >= 0 && inR[j])) continue;
    outline++;
    const out = nb.find((j) => j < 0 || !inside[j]);
    if (out === undefined) continue;
    open++;
    if (out >= 0 && inHull(out)) insideOpen++;
  }
  const sides = openingSides(px, inside, hull, w, h);
  return { open: open / Math.max(1, outline), insideOpen: insideOpen / Math.max(1, open), sides };
}

/**
 * How many separate pieces of the subject's opening (the backdrop inside the convex hull of the
 * rest of the cut-out) the region borders, counting pieces of at least a twentieth of its area: a
 * strip standing across the opening splits it in two (the plant on both sides of the peg); a part
 * hanging at the subject's edge borders one piece or none.
 */
function openingSides(px: number[], inside: Uint8Array, hull: { left: Float64Array; right: Float64Array }, w: number, h: number): number {
  const opening = new Uint8Array(inside.length);
  const { left, right } = hull;
  for (let y = 0; y < h; y++) {
    for (let x = Math.max(0, Math.ceil(left[y])), i = y * w + x; x <= Math.min(w - 1, right[y]); x++, i++) if (!inside[i]) opening[i] = 255;
  }
  const { labels, areas } = labelRegions(opening, w, h);
  const touched = new Set<number>();
  for (const i of px) {
    const x = i % w;
    for (const j of [x > 0 ? i - 1 : -1, x < w - 1 ? i + 1 : -1, i - w, i + w]) if (j >= 0 && j < labels.length && labels[j]) touched.add(labels[j]);
  }
  let sides = 0;
  for (const l of touched) if (areas[l] >= px.length / 20) sides++;
  return sides;
}

/**
 * The regions of the cut-out (`inside`, 1 = in, analysis resolution, with the block colours) that
 * are backdrop seen through the subject's opening (module comment), as one mask of 1s, or
 * undefined when there are none. Every judged region (a colour rare in the rest) is pushed with
 * its figures to `regions` when given (for the bench probe and the tests).
 */
export function openingBackdrop(
  inside: Uint8Array,
  colours: Float32Array,
  w: number,
  h: number,
  p: OpeningParams = DEFAULT_OPENING,
  regions?: OpeningRegion[],
): Uint8Array | undefined {
  let area = 0;
  for (let i = 0; i < inside.length; i++) area += inside[i];
  if (!area || touchesFrame(inside, w, h)) return undefined;
  const taken = new Uint8Array(inside.length);
  let drop: Uint8Array | undefined;
  for (const seed of colourRegions(inside, colours, w, p.joinTolerance)) {
    // Seeds large enough to matter (a grown region is at least its seed) and not already judged.
    if (seed.length < (p.minShare / 4) * area || taken[seed[0]]) continue;
    const mean = meanColour(seed, colours);
    const px = growByColour(seed, mean, inside, colours, w, p.colourDistance);
    for (const i of px) taken[i] = 1;
    if (px.length < p.minShare * area || px.length > p.maxShare * area) continue;
    const rare = rareShare(px, mean, inside, colours, w, h, p.colourDistance);
    if (rare > p.rareShare) {
      regions?.push({
        pixels: px,
        drop: false,
        describe: `share ${(px.length / area).toFixed(2)} colour ${mean.map((v) => v.toFixed(0)).join(',')} similar in rest ${rare.toFixed(3)}`,
      });
      continue;
    }
    const { open, insideOpen, sides } = judge(px, inside, w, h);
    const isBackdrop = open >= p.openShare && insideOpen >= p.insideShare && sides >= p.minSides;
    regions?.push({
      pixels: px,
      drop: isBackdrop,
      describe: `share ${(px.length / area).toFixed(2)} colour ${mean.map((v) => v.toFixed(0)).join(',')} similar in rest ${rare.toFixed(3)} open ${open.toFixed(2)} inside hull ${insideOpen.toFixed(2)} sides ${sides}`,
    });
    if (!isBackdrop) continue;
    drop ??= new Uint8Array(inside.length);
    for (const i of px) drop[i] = 1;
  }
  if (drop) dropSlivers(inside, drop, w, h, p.sliver);
  return drop;
}

/**
 * The region's own outline (its colours blended with the backdrop's, so not grown into it) is left
 * as thin slivers along where it was (the peg's edges). Pieces of the rest of the cut-out within
 * 2 * `r` of the dropped region that a morphological opening of radius `r` removes (thinner than
 * about 2 * `r`) are dropped with it (in place); the subject's own parts there are wider (the
 * headband, the cups).
 */
function dropSlivers(inside: Uint8Array, drop: Uint8Array, w: number, h: number, r: number): void {
  const outsideRest = inside.map((v, i) => (v && !drop[i] ? 0 : 1));
  const fromOutside = distanceToSeeds(outsideRest, w, h);
  const fromCore = distanceToSeeds(
    Uint8Array.from(fromOutside, (d) => (d > r ? 1 : 0)),
    w,
    h,
  );
  const fromDrop = distanceToSeeds(drop, w, h);
  for (let i = 0; i < inside.length; i++) if (!outsideRest[i] && fromCore[i] > r && fromDrop[i] <= 2 * r) drop[i] = 1;
  // Blocks next to it that the analysis called backdrop can still hold a line of confident full
  // resolution pixels (the block's sample fell just outside it): they go too.
  for (let i = 0; i < inside.length; i++) if (!inside[i] && fromDrop[i] <= 1.5) drop[i] = 1;
}

/**
 * Whether a mask (1 = in) runs out of the picture. The cut-out's convex hull then is not the
 * subject's outline (the rest of it is beyond the frame), so "inside the opening" means nothing:
 * on a photo of a man in a patterned shirt cut by the frame (basketball1.png), the shirt's dark
 * patches passed as backdrop in the opening of what was left. A product photo shows the product
 * whole (frame.ts: what runs out of the picture is the backdrop's). fusion.ts asks it of the
 * models' masks before the frame cut too.
 */
export function touchesFrame(inside: Uint8Array, w: number, h: number): boolean {
  for (let x = 0; x < w; x++) if (inside[x] || inside[(h - 1) * w + x]) return true;
  for (let y = 0; y < h; y++) if (inside[y * w] || inside[y * w + w - 1]) return true;
  return false;
}

/** The share of the rest of the cut-out (more than 2 px from the region: its outline's mixed colours) within `d` of the region's colour. */
function rareShare(px: number[], mean: number[], inside: Uint8Array, colours: Float32Array, w: number, h: number, d: number): number {
  const near = new Uint8Array(inside.length);
  for (const i of px) near[i] = 1;
  // The band around the region: 5 x 5 around its outline pixels only (the interior's lie in the region).
  for (const i of px) {
    const x = i % w,
      y = (i / w) | 0;
    if (x > 0 && x < w - 1 && y > 0 && y < h - 1 && near[i - 1] && near[i + 1] && near[i - w] && near[i + w]) continue;
    for (let yy = Math.max(0, y - 2); yy <= Math.min(h - 1, y + 2); yy++) {
      for (let xx = Math.max(0, x - 2); xx <= Math.min(w - 1, x + 2); xx++) if (!near[yy * w + xx]) near[yy * w + xx] = 2;
    }
  }
  let rest = 0,
    similar = 0;
  for (let i = 0; i < inside.length; i++) {
    if (!inside[i] || near[i]) continue;
    rest++;
    if (colourDist(colours, i, mean) < d) similar++;
  }
  return similar / Math.max(1, rest);
}

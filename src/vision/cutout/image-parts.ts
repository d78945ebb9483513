/**
 * Parts the models miss but the image shows (round 10, issue 19).
 *
 * A detached part both models give nothing in every view (the lime stem and leaf of two cherries
 * over a busy plant: ~0.01 in ISNet and U2-Net-p, whole frame, crops, mirrored; round 9) can only
 * come from the image. What a person sees there is one large, smooth, evenly shaded region with a
 * strong outline right next to the confident body, amid a busy texture. So the image near the
 * body is split into coherent regions (graph segmentation, Felzenszwalb & Huttenlocher, IJCV 2004,
 * at the fusion's analysis size), and a region joins the cut-out only if all of these hold:
 *  - it comes within a small gap of the body and does not touch the frame (a wall or a table
 *    behind the subject runs out of the picture);
 *  - it is 15-60% of the body's area (not a speck, not a second object) and lies off the body;
 *  - it is smooth inside while the backdrop ring around it is busy, and its outline is strong
 *    (smooth backdrop next to a subject, a wall beside a person, has a smooth ring);
 *  - its colour is rare in that ring and in few other regions of its size nearby: a brick's face
 *    is smooth in a busy ring of mortar too, but the ring is full of its colour (about half);
 *  - it is not far smoother than the body itself: a part shares the subject's surface and focus,
 *    while an out-of-focus backdrop beside a sharp furry animal is much smoother than it (the
 *    bokeh next to the squirrel: 0.29 of the body's texture; the cherries' stem: 1.7);
 *  - the models do not lean towards it: a region they half-see is theirs to judge (fusion.ts).
 * Figures for every test on the bench set and the fixture photos: docs/ops/remove-background.md,
 * round 10. The segmentation runs only in a window around a run of smooth pixels reaching from
 * the gap and closed off from the frame (the cheap gate), so most images pay a few passes over
 * the analysis grid (about 1-3 ms at 320x240; the cherries about 10).
 */
import { distanceToSeeds } from './cleanup.js';
import { bandRect, cropPixels, type Rect } from './region.js';

export interface ImagePartParams {
  /** Graph segmentation scale k (colour distance x pixels): larger k, larger regions. */
  scale: number;
  /** Regions smaller than this many analysis pixels are merged into their most similar neighbour. */
  minSize: number;
  /** A region must come within this share of the analysis diagonal of the body (the gap). */
  gapShare: number;
  /** Its area, as a share of the body's: at least... */
  minShare: number;
  /** ...and at most (a region as large as the body is another object, or backdrop). */
  maxShare: number;
  /** At most this share of it may lie on the body (it is outside the body). */
  maxOverlap: number;
  /** Mean colour gradient inside it (over the image's mean gradient): at most this. */
  maxInterior: number;
  /** The ring of backdrop around it (not body), this share of the diagonal wide... */
  ringShare: number;
  /** ...has a mean gradient at least this many times its inside's... */
  minRingContrast: number;
  /** ...the inside's taken as at least this (two flat surfaces, a flat part on a flat wall, are no contrast). */
  interiorFloor: number;
  /** Mean gradient on its outline against that ring (over the image's mean): at least this. */
  minOutline: number;
  /** The gate: pixels with a gradient (over the image's mean) at most this are smooth... */
  smoothEdge: number;
  /** ...and a run of them from the gap, off the frame, of at least this share of the body's area... */
  gateMinShare: number;
  /** ...runs the segmentation in a window around it, its box grown by this share of its longer side. */
  windowShare: number;
  /** The models' higher soft value, mean on it (0..255): at most this. */
  maxSupport: number;
  /** Colour distance under which two colours are alike. */
  alike: number;
  /** At most this share of the ring is alike in colour to the region. */
  maxRingAlike: number;
  /** At most this many other regions in its window repeat it. */
  maxRepeats: number;
  /** Its inside's gradient at least this share of the body's inside's: far smoother than the subject is backdrop (out of focus, a wall). */
  minBodyLike: number;
}

export const DEFAULT_IMAGE_PARTS: ImagePartParams = {
  scale: 1200,
  minSize: 20,
  gapShare: 0.015,
  minShare: 0.15,
  maxShare: 0.6,
  maxOverlap: 0.1,
  maxInterior: 0.6,
  ringShare: 0.02,
  minRingContrast: 2,
  interiorFloor: 0.2,
  minOutline: 2,
  smoothEdge: 1,
  gateMinShare: 0.1,
  windowShare: 0.2,
  maxSupport: 64,
  alike: 30,
  maxRingAlike: 0.2,
  maxRepeats: 2,
  minBodyLike: 0.6,
};

/** One image region near the body, with what the rule looks at (for probes and the decision). */
export interface RegionStats {
  label: number;
  area: number;
  /** Share of the body's area. */
  share: number;
  framed: boolean;
  /** Nearest distance to the body, analysis pixels. */
  gap: number;
  overlap: number;
  interior: number;
  ring: number;
  outline: number;
  support: number;
  /** Its inside's gradient over the body's inside's: a part of the object shares its surface (smooth render, sharp focus). */
  bodyLike: number;
  /** Share of the ring whose colour is within `alike` of the region's mean colour. */
  ringAlike: number;
  /** Other regions in its window of a similar colour, size and smoothness (a repeating texture: bricks). */
  repeats: number;
  admitted: boolean;
}

/**
 * Graph segmentation (Felzenszwalb & Huttenlocher 2004) of an interleaved RGB float grid,
 * 4-connected, edges weighted by colour distance and sorted by a counting sort (weights are
 * quantised to 1/4 of a level). Returns a label per pixel, 0..count-1.
 */
export function segmentGraph(rgb: Float32Array, w: number, h: number, k: number, minSize: number): { labels: Int32Array; count: number } {
  const n = w * h;
  // Edge e joins pixel e >> 1 to its right (e even) or lower (e odd) neighbour.
  const weight = new Float32Array(2 * n).fill(-1);
  const Q = 4;
  const buckets = Math.ceil(Math.sqrt(3) * 255 * Q) + 2;
  const counts = new Uint32Array(buckets + 1);
  for (let y = 0, i = 0; y < h; y++) {
    for (let x = 0; x < w; x++, i++) {
      if (x + 1 < w) weight[2 * i] = colourDistance(rgb, i, i + 1);
      if (y + 1 < h) weight[2 * i + 1] = colourDistance(rgb, i, i + w);
    }
  }
  for (let e = 0; e < 2 * n; e++) if (weight[e] >= 0) counts[((weight[e] * Q) | 0) + 1]++;
  for (let b = 1; b <= buckets; b++) counts[b] += counts[b - 1];
  const order = new Uint32Array(counts[buckets]);
  for (let e = 0; e < 2 * n; e++) if (weight[e] >= 0) order[counts[(weight[e] * Q) | 0]++] = e;
  const parent = new Int32Array(n);
  const size = new Int32Array(n).fill(1);
  const thresh = new Float32Array(n).fill(k);
  for (let i = 0; i < n; i++) parent[i] = i;
  const find = (a: number) => {
    while (parent[a] !== a) a = parent[a] = parent[parent[a]];
    return a;
  };
  // Two regions merge when the edge between them is no heavier than either one's internal
  // difference plus k / its size (the paper's predicate), lightest edges first.
  for (let o = 0; o < order.length; o++) {
    const e = order[o];
    const i = e >> 1;
    let a = find(i),
      b = find(e & 1 ? i + w : i + 1);
    const wt = weight[e];
    if (a === b || wt > thresh[a] || wt > thresh[b]) continue;
    if (size[a] < size[b]) [a, b] = [b, a];
    parent[b] = a;
    size[a] += size[b];
    thresh[a] = wt + k / size[a];
  }
  // Specks join the neighbour they are most alike (the lightest edge first).
  for (let o = 0; o < order.length; o++) {
    const e = order[o];
    const i = e >> 1;
    let a = find(i),
      b = find(e & 1 ? i + w : i + 1);
    if (a === b || (size[a] >= minSize && size[b] >= minSize)) continue;
    if (size[a] < size[b]) [a, b] = [b, a];
    parent[b] = a;
    size[a] += size[b];
  }
  const labels = new Int32Array(n);
  const id = new Int32Array(n).fill(-1);
  let count = 0;
  for (let i = 0; i < n; i++) {
    const r = find(i);
    if (id[r] < 0) id[r] = count++;
    labels[i] = id[r];
  }
  return { labels, count };
}

function colourDistance(rgb: Float32Array, i: number, j: number): number {
  const dr = rgb[3 * i] - rgb[3 * j],
    dg = rgb[3 * i + 1] - rgb[3 * j + 1],
    db = rgb[3 * i + 2] - rgb[3 * j + 2];
  return Math.sqrt(dr * dr + dg * dg + db * db);
}

export interface ImagePartInput {
  /** Colours at analysis resolution (frame.ts blockMeans), interleaved RGB. */
  colours: Float32Array;
  /** Colour gradient at analysis resolution over its mean (frame.ts colourEdges). */
  edges: Float32Array;
  /** 1 on the kept cut-out (analysis resolution). */
  body: Uint8Array;
  /** The models' higher soft value (analysis resolution), 0..255. */
  hi: Uint8Array;
  /** Distance to the body (cleanup.ts distanceToSeeds), when the caller has it already. */
  distance?: Float32Array;
  width: number;
  height: number;
}

/** A connected run of smooth pixels reached from the gap around the body (the cheap gate). */
export interface SmoothRun {
  area: number;
  framed: boolean;
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

/**
 * The image regions the rule admits (1s at analysis resolution), or undefined when none is, with
 * the stats of every region near the body that was looked at and the gate's runs.
 */
export function imageParts(input: ImagePartInput, p: ImagePartParams = DEFAULT_IMAGE_PARTS): { add?: Uint8Array; regions: RegionStats[]; runs: SmoothRun[] } {
  const { colours, edges, body, hi, width: w, height: h } = input;
  const n = w * h;
  let bodyArea = 0;
  for (let i = 0; i < n; i++) bodyArea += body[i];
  if (!bodyArea) return { regions: [], runs: [] };
  const diag = Math.hypot(w, h);
  const gap = Math.max(2, p.gapShare * diag);
  const ringWidth = Math.max(2, p.ringShare * diag);
  const dist = input.distance ?? distanceToSeeds(body, w, h);
  // The gate: a part's smooth inside reaches the gap and is closed off from the frame; only
  // around such a run of smooth pixels does the segmentation run (in a window, not the frame).
  // Central differences put a region's outline on its first pixel inside too, so its smooth
  // inside starts up to two pixels further than the gap.
  const runs = smoothRuns(edges, body, dist, gap + 2, p.smoothEdge, w, h);
  const regions: RegionStats[] = [];
  let add: Uint8Array | undefined;
  let bodyTexture = -1;
  // The body's own texture, worked out once and only when a region gets this far.
  const bodyGradient = () => {
    if (bodyTexture < 0) bodyTexture = insideGradient(body, edges, w, h);
    return bodyTexture;
  };
  for (const run of runs) {
    if (run.framed || run.area < p.gateMinShare * bodyArea || run.area > p.maxShare * bodyArea) continue;
    const win = windowAround(run, Math.max(ringWidth + 2, p.windowShare * Math.max(run.x1 - run.x0 + 1, run.y1 - run.y0 + 1)), w, h);
    const ww = win.x1 - win.x0,
      wh = win.y1 - win.y0;
    const wColours = cropPixels(colours, w, 3, win, (k) => new Float32Array(k));
    const wEdges = cropPixels(edges, w, 1, win, (k) => new Float32Array(k));
    const wBody = cropPixels(body, w, 1, win, (k) => new Uint8Array(k));
    const wDist = cropPixels(dist, w, 1, win, (k) => new Float32Array(k));
    const { labels, count } = segmentGraph(wColours, ww, wh, p.scale, p.minSize);
    // A region on the window's border runs beyond it: not a closed part, as one on the frame.
    const stats = regionStats(
      labels,
      count,
      wColours,
      wBody,
      wDist,
      wEdges,
      cropPixels(hi, w, 1, win, (k) => new Uint8Array(k)),
      ww,
      wh,
    );
    for (let l = 0; l < count; l++) {
      const s = stats[l];
      if (s.gap > gap || s.framed || s.area < p.minShare * bodyArea || s.area > p.maxShare * bodyArea || s.overlap > p.maxOverlap) continue;
      const ring = ringAround(labels, l, wDist, wEdges, wColours, s.colour, p.alike, ringWidth, ww, wh);
      const r: RegionStats = {
        ...s,
        share: s.area / bodyArea,
        ring: ring.busy / Math.max(p.interiorFloor, s.interior),
        outline: ring.outline,
        ringAlike: ring.alike,
        bodyLike: s.interior / bodyGradient(),
        repeats: repeatsOf(stats, l, p),
        admitted: false,
      };
      r.admitted = admits(r, p);
      regions.push(r);
      if (!r.admitted) continue;
      add ??= new Uint8Array(n);
      for (let y = 0; y < wh; y++) {
        for (let x = 0; x < ww; x++) {
          const i = (win.y0 + y) * w + win.x0 + x;
          if (labels[y * ww + x] === l && !body[i]) add[i] = 1;
        }
      }
    }
  }
  return { add, regions, runs };
}

/** The rule's image tests on a region near the body, of a part's size, off the frame. */
function admits(r: RegionStats, p: ImagePartParams): boolean {
  return (
    r.interior <= p.maxInterior &&
    r.ring >= p.minRingContrast &&
    r.outline >= p.minOutline &&
    r.support <= p.maxSupport &&
    r.ringAlike <= p.maxRingAlike &&
    r.repeats <= p.maxRepeats &&
    r.bodyLike >= p.minBodyLike
  );
}

/** Mean gradient on the mask's inside (pixels whose four neighbours are in it too). */
function insideGradient(mask: Uint8Array, edges: Float32Array, w: number, h: number): number {
  let sum = 0,
    count = 0;
  for (let y = 1; y < h - 1; y++) {
    for (let x = 1, i = y * w + 1; x < w - 1; x++, i++) {
      if (!mask[i] || !mask[i - 1] || !mask[i + 1] || !mask[i - w] || !mask[i + w]) continue;
      sum += edges[i];
      count++;
    }
  }
  return count ? sum / count : 0;
}

/** The run's box grown by `pad`, clipped to the grid. */
function windowAround(run: SmoothRun, pad: number, w: number, h: number): Rect {
  const m = Math.ceil(pad);
  return { x0: Math.max(0, run.x0 - m), y0: Math.max(0, run.y0 - m), x1: Math.min(w, run.x1 + 1 + m), y1: Math.min(h, run.y1 + 1 + m) };
}

/**
 * Runs of smooth pixels (gradient <= `t`), 4-connected, outside the body, reached from its gap,
 * each with its area, box and whether it reaches the frame: a flood fill over the pixels it
 * visits. On a busy backdrop the runs are small; on a uniform one a run reaches the frame.
 */
function smoothRuns(edges: Float32Array, body: Uint8Array, dist: Float32Array, gap: number, t: number, w: number, h: number): SmoothRun[] {
  const n = w * h;
  const seen = new Uint8Array(n);
  const stack = new Int32Array(n);
  const out: SmoothRun[] = [];
  let top = 0;
  for (let s = 0; s < n; s++) {
    if (seen[s] || body[s] || dist[s] > gap || edges[s] > t) continue;
    const run: SmoothRun = { area: 0, framed: false, x0: w, y0: h, x1: -1, y1: -1 };
    top = 0;
    stack[top++] = s;
    seen[s] = 1;
    while (top) {
      const i = stack[--top];
      const x = i % w,
        y = (i / w) | 0;
      run.area++;
      if (x < run.x0) run.x0 = x;
      if (x > run.x1) run.x1 = x;
      if (y < run.y0) run.y0 = y;
      if (y > run.y1) run.y1 = y;
      if (x === 0 || y === 0 || x === w - 1 || y === h - 1) {
        run.framed = true;
        continue;
      }
      visit(i - 1);
      visit(i + 1);
      visit(i - w);
      visit(i + w);
    }
    out.push(run);
  }
  return out;

  function visit(j: number): void {
    if (seen[j] || body[j] || edges[j] > t) return;
    seen[j] = 1;
    stack[top++] = j;
  }
}

type BaseStats = Omit<RegionStats, 'share' | 'ring' | 'outline' | 'bodyLike' | 'ringAlike' | 'repeats' | 'admitted'> & {
  colour: [number, number, number];
};

/** Regions other than `l` of a colour within `alike` of its, half to twice its area, as smooth inside. */
function repeatsOf(stats: BaseStats[], l: number, p: ImagePartParams): number {
  const s = stats[l];
  let count = 0;
  for (const o of stats) {
    if (o.label === l || o.area < s.area / 2 || o.area > 2 * s.area || o.interior > p.maxInterior) continue;
    if (Math.hypot(o.colour[0] - s.colour[0], o.colour[1] - s.colour[1], o.colour[2] - s.colour[2]) <= p.alike) count++;
  }
  return count;
}

/** Area, frame contact, gap to the body, overlap with it, inside gradient and model support per region. */
function regionStats(
  labels: Int32Array,
  count: number,
  colours: Float32Array,
  body: Uint8Array,
  dist: Float32Array,
  edges: Float32Array,
  hi: Uint8Array,
  w: number,
  h: number,
): BaseStats[] {
  const area = new Float64Array(count),
    overlap = new Float64Array(count),
    inner = new Float64Array(count),
    innerN = new Float64Array(count),
    support = new Float64Array(count),
    colour = new Float64Array(3 * count),
    gap = new Float64Array(count).fill(Infinity);
  const framed = new Uint8Array(count);
  for (let y = 0, i = 0; y < h; y++) {
    for (let x = 0; x < w; x++, i++) {
      const l = labels[i];
      area[l]++;
      support[l] += hi[i];
      for (let c = 0; c < 3; c++) colour[3 * l + c] += colours[3 * i + c];
      if (body[i]) overlap[l]++;
      else if (dist[i] < gap[l]) gap[l] = dist[i];
      if (x === 0 || y === 0 || x === w - 1 || y === h - 1) {
        framed[l] = 1;
        continue;
      }
      // Inside: all four neighbours in the region (the outline carries the region's own edge).
      if (labels[i - 1] === l && labels[i + 1] === l && labels[i - w] === l && labels[i + w] === l) {
        inner[l] += edges[i];
        innerN[l]++;
      }
    }
  }
  const out: BaseStats[] = [];
  for (let l = 0; l < count; l++) {
    out.push({
      label: l,
      area: area[l],
      framed: framed[l] === 1,
      gap: gap[l],
      overlap: overlap[l] / area[l],
      interior: innerN[l] ? inner[l] / innerN[l] : Infinity,
      support: support[l] / area[l],
      colour: [colour[3 * l] / area[l], colour[3 * l + 1] / area[l], colour[3 * l + 2] / area[l]],
    });
  }
  return out;
}

/**
 * Mean gradient of the backdrop ring around region `l` (within `r` of it, not in it, not on the
 * body), and on its outline against that ring; worked out on the region's box grown by `r`.
 */
function ringAround(
  labels: Int32Array,
  l: number,
  bodyDistance: Float32Array,
  edges: Float32Array,
  colours: Float32Array,
  colour: [number, number, number],
  alike: number,
  r: number,
  w: number,
  h: number,
): { busy: number; outline: number; alike: number } {
  // The region's box, grown to hold its ring.
  const box = bandRect(w, h, Math.ceil(r) + 1, (i) => labels[i] === l);
  if (!box) return { busy: 0, outline: 0, alike: 0 };
  const [bx, by, bw, bh] = [box.x0, box.y0, box.x1 - box.x0, box.y1 - box.y0];
  const seed = new Uint8Array(bw * bh);
  for (let y = 0; y < bh; y++) for (let x = 0; x < bw; x++) seed[y * bw + x] = labels[(by + y) * w + bx + x] === l ? 1 : 0;
  const d = distanceToSeeds(seed, bw, bh);
  let busy = 0,
    busyN = 0,
    edge = 0,
    edgeN = 0,
    similar = 0;
  for (let y = 0; y < bh; y++) {
    for (let x = 0; x < bw; x++) {
      const k = y * bw + x,
        i = (by + y) * w + bx + x;
      // Off the body and its own outline: the ring is the backdrop's texture.
      if (seed[k] || bodyDistance[i] <= 2 || d[k] > r) continue;
      // The ring's first pixels carry the region's outline against the backdrop; the texture
      // around it is measured beyond them (a flat part on a flat wall has a strong outline too).
      if (d[k] <= 1.5) {
        edge += edges[i];
        edgeN++;
        continue;
      }
      busy += edges[i];
      busyN++;
      if (Math.hypot(colours[3 * i] - colour[0], colours[3 * i + 1] - colour[1], colours[3 * i + 2] - colour[2]) <= alike) similar++;
    }
  }
  return { busy: busyN ? busy / busyN : 0, outline: edgeN ? edge / edgeN : 0, alike: busyN ? similar / busyN : 0 };
}

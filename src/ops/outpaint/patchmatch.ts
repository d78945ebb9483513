import type { Level } from './pyramid.js';
import type { Rng } from '../../media/random.js';

/**
 * PatchMatch (Barnes et al. 2009) over one pyramid level, in the completion setting of
 * Wexler et al. 2007: every patch that touches the band ("target") gets a nearest neighbour
 * among the patches lying wholly inside the original ("source"); the band is then re-estimated
 * by letting each overlapping target patch vote for its pixels (EM).
 */

export interface Field {
  /** Source patch centre for every canvas pixel; identity for pixels whose patch is all known. */
  sx: Int32Array;
  sy: Int32Array;
  /** Patch SSD of each target to its source (same units as `img`, summed over pixels and channels). */
  dist: Float32Array;
  /** Canvas indices of the target patch centres, in scan order. */
  targets: Int32Array;
}

export interface SearchParams {
  /** Patch radius: patches are (2r+1)^2. */
  r: number;
  /** Sources must lie within this Chebyshev distance of the target's nearest original pixel. */
  window: number;
  /** Largest random-search radius; halved down to 1. */
  maxRadius: number;
  /**
   * Cost added per patch for every use of a source pixel beyond the first, in SSD units per
   * pixel and channel (0 = off). See `Usage`.
   */
  reuse: number;
  /**
   * Cost of copying a distinctive source (distinct.ts): `map` (per pixel of the level, mean
   * squared difference to the nearest other patch) x `cost`, ramping in linearly from nothing at
   * the seam to full strength `depth` pixels out.
   */
  distinct?: { map: Float32Array; cost: number; depth: number };
  /**
   * Cost of copying the salient subject (salient.ts): `map` (per pixel of the level, 0..1, the
   * subject mask) x `cost` x the weight of the side the target lies beyond (`sides`: left, top,
   * right, bottom), ramping in linearly from nothing at the seam to full strength `depth` pixels out.
   */
  salient?: { map: Float32Array; cost: number; depth: number; sides: [number, number, number, number] };
  /**
   * Cost of a source whose detail differs from what the target is expected to hold (detail.ts):
   * `cost` x (source detail - expected detail)^2, per pixel and channel of the patch.
   */
  detail?: { source: Float32Array; want: Float32Array; cost: number };
}

/**
 * How often each source area is used, on cells of USAGE_CELL x USAGE_CELL pixels.
 *
 * Why: the EM objective alone is happy to copy the same good source region into the band again
 * and again (a second head above the head, the pot again below the pot, a row of identical
 * shuttle tanks): each copy is coherent, so nothing in the patch distance objects. Content-aware
 * fill tools penalise reusing a source (the "completeness" side of Wexler et al. / the
 * occurrence map of Kaspar et al. 2015). Here a candidate source pays `reuse` x patch size for
 * each target already mapped into its cell beyond one per pixel: a one-to-one copy is free,
 * a stamped repeat costs.
 */
export interface Usage {
  count: Int32Array;
  cw: number;
}

const USAGE_CELL = 4;

export function usageOf(L: Level, F: Field): Usage {
  const cw = Math.ceil(L.w / USAGE_CELL);
  const count = new Int32Array(cw * Math.ceil(L.h / USAGE_CELL));
  for (let i = 0; i < F.targets.length; i++) {
    const t = F.targets[i]!;
    count[((F.sy[t]! / USAGE_CELL) | 0) * cw + ((F.sx[t]! / USAGE_CELL) | 0)]++;
  }
  return { count, cw };
}

/** Target centres: every pixel whose patch overlaps the band. */
export function targetList(L: Level, r: number): Int32Array {
  const out: number[] = [];
  const ix0 = L.kx0 + r;
  const ix1 = L.kx1 - r;
  const iy0 = L.ky0 + r;
  const iy1 = L.ky1 - r;
  for (let y = 0; y < L.h; y++) {
    const inner = y >= iy0 && y < iy1;
    for (let x = 0; x < L.w; x++) {
      if (inner && x >= ix0 && x < ix1) continue;
      out.push(y * L.w + x);
    }
  }
  return Int32Array.from(out);
}

export function emptyField(L: Level, r: number): Field {
  const n = L.w * L.h;
  const sx = new Int32Array(n);
  const sy = new Int32Array(n);
  for (let y = 0, i = 0; y < L.h; y++)
    for (let x = 0; x < L.w; x++, i++) {
      sx[i] = x;
      sy[i] = y;
    }
  return { sx, sy, dist: new Float32Array(n), targets: targetList(L, r) };
}

const clampI = (v: number, lo: number, hi: number) => (v < lo ? lo : v > hi ? hi : v);

/**
 * SSD between the target patch at (tx,ty) and the source patch at (sx,sy), over the target's
 * in-canvas pixels, with original pixels counted KNOWN_WEIGHT times: a patch straddling the
 * seam must above all agree with what is really there, or EM settles on a band that is
 * consistent with itself but not with the picture. Stops once the running sum reaches `best`.
 */
export function patchDist(L: Level, tx: number, ty: number, sx: number, sy: number, r: number, best: number): number {
  const { img, w, h } = L;
  const y0 = ty < r ? -ty : -r;
  const y1 = ty + r >= h ? h - 1 - ty : r;
  const x0 = tx < r ? -tx : -r;
  const x1 = tx + r >= w ? w - 1 - tx : r;
  // Columns of the patch inside the original (only on rows inside it).
  const kx0 = Math.max(x0, L.kx0 - tx);
  const kx1 = Math.min(x1, L.kx1 - 1 - tx);
  let sum = 0;
  for (let dy = y0; dy <= y1; dy++) {
    const ty2 = ty + dy;
    const trow = ty2 * w + tx;
    const srow = (sy + dy) * w + sx;
    if (ty2 >= L.ky0 && ty2 < L.ky1 && kx0 <= kx1) {
      sum += rowSsd(img, trow, srow, x0, kx0 - 1) + KNOWN_WEIGHT * rowSsd(img, trow, srow, kx0, kx1) + rowSsd(img, trow, srow, kx1 + 1, x1);
    } else {
      sum += rowSsd(img, trow, srow, x0, x1);
    }
    if (sum >= best) return sum;
  }
  return sum;
}

const KNOWN_WEIGHT = 4;

function rowSsd(img: Float32Array, trow: number, srow: number, a: number, b: number): number {
  let sum = 0;
  for (let ti = (trow + a) * 3, si = (srow + a) * 3, e = (trow + b + 1) * 3; ti < e; ti++, si++) {
    const d = img[ti]! - img[si]!;
    sum += d * d;
  }
  return sum;
}

/** Per-level bounds shared by the search routines. */
function bounds(L: Level, r: number) {
  return { sx0: L.kx0 + r, sx1: L.kx1 - 1 - r, sy0: L.ky0 + r, sy1: L.ky1 - 1 - r };
}

/** Random nearest neighbours inside each target's window (coarsest-level start). */
export function randomInit(L: Level, F: Field, p: SearchParams, rng: Rng): void {
  const { sx0, sx1, sy0, sy1 } = bounds(L, p.r);
  const { w } = L;
  for (let i = 0; i < F.targets.length; i++) {
    const t = F.targets[i]!;
    const tx = t % w;
    const ty = (t - tx) / w;
    const qx = clampI(tx, L.kx0, L.kx1 - 1);
    const qy = clampI(ty, L.ky0, L.ky1 - 1);
    const lx = Math.max(sx0, qx - p.window),
      hx = Math.min(sx1, qx + p.window);
    const ly = Math.max(sy0, qy - p.window),
      hy = Math.min(sy1, qy + p.window);
    F.sx[t] = lx + (rng() % (hx - lx + 1));
    F.sy[t] = ly + (rng() % (hy - ly + 1));
  }
}

/** Recomputes every target's distance after the band estimate changed. */
export function refreshDistances(L: Level, F: Field, r: number): void {
  const { w } = L;
  for (let i = 0; i < F.targets.length; i++) {
    const t = F.targets[i]!;
    const tx = t % w;
    F.dist[t] = patchDist(L, tx, (t - tx) / w, F.sx[t]!, F.sy[t]!, r, Infinity);
  }
}

/**
 * One PatchMatch sweep: propagation from the two already-visited neighbours, then random
 * search around the current best at exponentially shrinking radii. Odd sweeps run backwards
 * so good matches flow both ways.
 */
export function sweep(L: Level, F: Field, p: SearchParams, rng: Rng, backward: boolean, usage?: Usage): void {
  const { w, h } = L;
  const { sx0, sx1, sy0, sy1 } = bounds(L, p.r);
  const { sx, sy, dist, targets } = F;
  const r = p.r;
  const step = backward ? -1 : 1;
  const patchSize = 3 * (2 * r + 1) ** 2;
  const reuseCost = p.reuse * patchSize;
  const distinct = p.distinct;
  const salient = p.salient;
  const detail = p.detail;
  const n = targets.length;
  for (let k = 0; k < n; k++) {
    const t = targets[backward ? n - 1 - k : k]!;
    const tx = t % w;
    const ty = (t - tx) / w;
    const qx = clampI(tx, L.kx0, L.kx1 - 1);
    const qy = clampI(ty, L.ky0, L.ky1 - 1);
    const lx = Math.max(sx0, qx - p.window),
      hx = Math.min(sx1, qx + p.window);
    const ly = Math.max(sy0, qy - p.window),
      hy = Math.min(sy1, qy + p.window);
    const bx0 = sx[t]!;
    const by0 = sy[t]!;
    let bx = bx0;
    let by = by0;
    let bd = dist[t]!;
    // This target's own use of its current cell does not count against it.
    const cell0 = usage ? ((by0 / USAGE_CELL) | 0) * usage.cw + ((bx0 / USAGE_CELL) | 0) : 0;
    if (usage) usage.count[cell0]--;
    let uniq = 0;
    let subj = 0;
    const want = detail ? detail.want[t]! : 0;
    const detailCost = detail ? detail.cost * patchSize : 0;
    if (distinct || salient) {
      const dx = tx < L.kx0 ? L.kx0 - tx : tx >= L.kx1 ? tx - L.kx1 + 1 : 0;
      const dy = ty < L.ky0 ? L.ky0 - ty : ty >= L.ky1 ? ty - L.ky1 + 1 : 0;
      const out = Math.max(dx, dy);
      if (distinct) uniq = Math.min(1, out / distinct.depth) * distinct.cost * patchSize;
      // The side the target lies beyond (left, top, right, bottom) sets how much of the cost applies.
      const side = dx >= dy ? (tx < L.kx0 ? 0 : 2) : ty < L.ky0 ? 1 : 3;
      if (salient) subj = Math.min(1, out / salient.depth) * salient.cost * salient.sides[side]! * patchSize;
    }
    const penalty = (cx: number, cy: number) => {
      let pen = uniq > 0 ? uniq * distinct!.map[cy * w + cx]! : 0;
      if (subj > 0) pen += subj * salient!.map[cy * w + cx]!;
      if (detailCost > 0) {
        const dd = detail!.source[cy * w + cx]! - want;
        pen += detailCost * dd * dd;
      }
      if (!usage) return pen;
      const over = usage.count[((cy / USAGE_CELL) | 0) * usage.cw + ((cx / USAGE_CELL) | 0)]! / CELL_AREA - 1;
      if (over > 0) pen += over * reuseCost;
      return pen;
    };
    let bc = bd + penalty(bx, by);
    const consider = (cx: number, cy: number) => {
      const pen = penalty(cx, cy);
      if (pen >= bc) return;
      const d = patchDist(L, tx, ty, cx, cy, r, bc - pen);
      if (d + pen < bc) {
        bc = d + pen;
        bd = d;
        bx = cx;
        by = cy;
      }
    };

    // Propagation: the neighbour's match shifted by one is a good guess for a coherent fill.
    const nx = tx - step;
    if (nx >= 0 && nx < w) {
      const cx = sx[t - step]! + step;
      const cy = sy[t - step]!;
      if (cx >= lx && cx <= hx && cy >= ly && cy <= hy && (cx !== bx || cy !== by)) consider(cx, cy);
    }
    const ny = ty - step;
    if (ny >= 0 && ny < h) {
      const nb = t - step * w;
      const cx = sx[nb]!;
      const cy = sy[nb]! + step;
      if (cx >= lx && cx <= hx && cy >= ly && cy <= hy && (cx !== bx || cy !== by)) consider(cx, cy);
    }

    for (let rad = p.maxRadius; rad >= 1; rad >>= 1) {
      const span = 2 * rad + 1;
      const cx = clampI(bx - rad + (rng() % span), lx, hx);
      const cy = clampI(by - rad + (rng() % span), ly, hy);
      if (cx === bx && cy === by) continue;
      consider(cx, cy);
    }
    sx[t] = bx;
    sy[t] = by;
    dist[t] = bd;
    if (usage) usage.count[((by / USAGE_CELL) | 0) * usage.cw + ((bx / USAGE_CELL) | 0)]++;
  }
}

const CELL_AREA = USAGE_CELL * USAGE_CELL;

/** ln(2): a steeper version of Wexler's gamma (1.3), per pixel of the level; measured to give a cleaner seam. */
const BOUNDARY_FALLOFF = Math.log(2);

/**
 * The weight of each target patch's vote, in two factors: `q`, from its patch distance (sigma
 * from the 75th percentile, Wexler et al., so the patches straddling the seam, which must agree
 * with fixed original pixels and so match worse than band-only patches, are not voted out), and
 * a factor e^-falloff per pixel of the patch centre's distance `depth` from the original, so the
 * seam is decided by the patches that see the original.
 *
 * The distance factor is applied relative to the voted pixel's own depth (`falloff(d)` for a
 * patch d pixels deeper, |d| <= r): only ratios between the patches of one pixel matter, and the
 * absolute factor, 2^-depth, underflowed Float32 past ~126-149 px, so deep band pixels got no
 * weight at all and were never re-voted after the level's first, uniform vote (round 7).
 */
interface VoteWeights {
  q: Float32Array;
  depth: Int32Array;
  /** Relative depth factor, indexed by (patch depth - pixel depth + r). */
  rel: Float64Array;
}

function depthAt(L: Level, x: number, y: number): number {
  const dx = x < L.kx0 ? L.kx0 - x : x >= L.kx1 ? x - L.kx1 + 1 : 0;
  const dy = y < L.ky0 ? L.ky0 - y : y >= L.ky1 ? y - L.ky1 + 1 : 0;
  return dx > dy ? dx : dy;
}

function voteWeights(L: Level, F: Field, r: number, uniform: boolean, falloff = BOUNDARY_FALLOFF): VoteWeights {
  const { w } = L;
  const { dist, targets } = F;
  const q = new Float32Array(L.w * L.h);
  const depth = new Int32Array(L.w * L.h);
  const rel = new Float64Array(2 * r + 1);
  for (let d = -r; d <= r; d++) rel[d + r] = uniform ? 1 : Math.exp(-falloff * d);
  for (let i = 0; i < targets.length; i++) {
    const t = targets[i]!;
    const x = t % w;
    depth[t] = depthAt(L, x, (t - x) / w);
  }
  if (uniform) {
    for (let i = 0; i < targets.length; i++) q[targets[i]!] = 1;
    return { q, depth, rel };
  }
  const side = 2 * r + 1;
  const norm = side * side * 3;
  const sample: number[] = [];
  const stride = Math.max(1, Math.floor(targets.length / 4096));
  for (let i = 0; i < targets.length; i += stride) sample.push(dist[targets[i]!]! / norm);
  sample.sort((a, b) => a - b);
  const s2 = 2 * (sample[Math.floor(sample.length * 0.75)]! + 1);
  for (let i = 0; i < targets.length; i++) {
    const t = targets[i]!;
    q[t] = Math.exp(-dist[t]! / norm / s2);
  }
  return { q, depth, rel };
}

/**
 * Voting (the M step): each band pixel becomes the weighted mean of what the overlapping
 * target patches' sources say it should be (weights: `voteWeights`). Sources are always
 * original pixels, so the band can be rewritten in place.
 */
export function vote(L: Level, F: Field, r: number, uniform = false, falloff = BOUNDARY_FALLOFF): void {
  const { w, h, img } = L;
  const { sx, sy } = F;
  const { q, depth, rel } = voteWeights(L, F, r, uniform, falloff);
  for (let y = 0; y < h; y++) {
    const inRows = y >= L.ky0 && y < L.ky1;
    for (let x = 0; x < w; x++) {
      if (inRows && x >= L.kx0 && x < L.kx1) {
        x = L.kx1 - 1;
        continue;
      }
      const base = r - depthAt(L, x, y);
      let a0 = 0,
        a1 = 0,
        a2 = 0,
        ws = 0;
      const oy0 = Math.max(-r, y - h + 1),
        oy1 = Math.min(r, y);
      const ox0 = Math.max(-r, x - w + 1),
        ox1 = Math.min(r, x);
      for (let oy = oy0; oy <= oy1; oy++) {
        const row = (y - oy) * w;
        for (let ox = ox0; ox <= ox1; ox++) {
          const t = row + x - ox;
          const qt = q[t]!;
          if (qt === 0) continue;
          const wt = qt * rel[depth[t]! + base]!;
          const si = ((sy[t]! + oy) * w + sx[t]! + ox) * 3;
          a0 += wt * img[si]!;
          a1 += wt * img[si + 1]!;
          a2 += wt * img[si + 2]!;
          ws += wt;
        }
      }
      if (ws > 0) {
        const di = (y * w + x) * 3;
        img[di] = a0 / ws;
        img[di + 1] = a1 / ws;
        img[di + 2] = a2 / ws;
      }
    }
  }
}

/**
 * Final rendering (the finest scale): each band pixel takes the value that its best overlapping
 * target patch (highest vote weight) gives it, instead of the weighted mean of all of them.
 */
export function renderBest(L: Level, F: Field, r: number, falloff = BOUNDARY_FALLOFF): Int32Array {
  const { w, h, img } = L;
  const { sx, sy } = F;
  // Which original pixel each band pixel was copied from (-1: none), for the gradient-domain render.
  const from = new Int32Array(w * h).fill(-1);
  const { q, depth, rel } = voteWeights(L, F, r, false, falloff);
  for (let y = 0; y < h; y++) {
    const inRows = y >= L.ky0 && y < L.ky1;
    for (let x = 0; x < w; x++) {
      if (inRows && x >= L.kx0 && x < L.kx1) {
        x = L.kx1 - 1;
        continue;
      }
      const base = r - depthAt(L, x, y);
      let best = 0;
      let bi = -1;
      const oy0 = Math.max(-r, y - h + 1),
        oy1 = Math.min(r, y);
      const ox0 = Math.max(-r, x - w + 1),
        ox1 = Math.min(r, x);
      for (let oy = oy0; oy <= oy1; oy++) {
        const row = (y - oy) * w;
        for (let ox = ox0; ox <= ox1; ox++) {
          const t = row + x - ox;
          const qt = q[t]!;
          if (qt === 0) continue;
          const wt = qt * rel[depth[t]! + base]!;
          if (wt > best) {
            best = wt;
            bi = ((sy[t]! + oy) * w + sx[t]! + ox) * 3;
          }
        }
      }
      if (bi >= 0) {
        const di = (y * w + x) * 3;
        img[di] = img[bi]!;
        img[di + 1] = img[bi + 1]!;
        img[di + 2] = img[bi + 2]!;
        from[y * w + x] = bi / 3;
      }
    }
  }
  return from;
}

/**
 * Carries a coarse field to the next finer level: each fine pixel takes its parent's match,
 * doubled, plus its own offset within the parent, clamped to the fine level's valid sources.
 */
export function upsampleField(coarse: Level, C: Field, fine: Level, r: number): Field {
  const F = emptyField(fine, r);
  const sx0 = fine.kx0 + r,
    sx1 = fine.kx1 - 1 - r,
    sy0 = fine.ky0 + r,
    sy1 = fine.ky1 - 1 - r;
  const cw = coarse.w;
  for (let i = 0; i < F.targets.length; i++) {
    const t = F.targets[i]!;
    const x = t % fine.w;
    const y = (t - x) / fine.w;
    const c = Math.min(y >> 1, coarse.h - 1) * cw + Math.min(x >> 1, cw - 1);
    F.sx[t] = clampI(2 * C.sx[c]! + (x & 1), sx0, sx1);
    F.sy[t] = clampI(2 * C.sy[c]! + (y & 1), sy0, sy1);
  }
  return F;
}

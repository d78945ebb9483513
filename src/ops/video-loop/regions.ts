/**
 * Where the scene may move on its own: sky, water and foliage, found by simple colour and
 * texture cues on the motion mesh (one node per `cell` pixels). The weights are soft (0..1)
 * and zero on and around the subject, so the subject's surroundings never smear.
 */

import { boxBlur } from '../../media/filters.js';

export interface Grid {
  /** Pixel spacing of the mesh nodes. */
  cell: number;
  gw: number;
  gh: number;
}

export interface Regions {
  sky: Float32Array;
  water: Float32Array;
  foliage: Float32Array;
  /** Bright parts of sky and water, where light may shimmer. */
  highlight: Float32Array;
}

export function makeGrid(width: number, height: number, cell: number): Grid {
  return { cell, gw: Math.floor((width - 1) / cell) + 2, gh: Math.floor((height - 1) / cell) + 2 };
}

/** Box blur of a grid field, `passes` times radius `r` (approximately Gaussian after 2-3). */
const blurGrid = (f: Float32Array, gw: number, gh: number, r: number, passes = 2): Float32Array => boxBlur(f, gw, gh, r, passes);

const smooth = (e0: number, e1: number, v: number) => {
  const t = Math.min(1, Math.max(0, (v - e0) / (e1 - e0)));
  return t * t * (3 - 2 * t);
};

/**
 * `rgb` is the first frame; `alpha` the subject's. Returns per-node region weights.
 */
export function detectRegions(rgb: Uint8Array, alpha: Uint8Array, width: number, height: number, grid: Grid): Regions {
  const { cell, gw, gh } = grid;
  const n = gw * gh;
  const R = new Float32Array(n),
    G = new Float32Array(n),
    B = new Float32Array(n),
    L = new Float32Array(n);
  const fine = new Float32Array(n),
    subj = new Float32Array(n);
  // Per-node block statistics: mean colour, luminance spread within the block (fine texture)
  // and subject coverage.
  for (let j = 0; j < gh; j++) {
    const y0 = Math.min(height - 1, j * cell),
      y1 = Math.min(height, y0 + cell);
    for (let i = 0; i < gw; i++) {
      const x0 = Math.min(width - 1, i * cell),
        x1 = Math.min(width, x0 + cell);
      let r = 0,
        g = 0,
        b = 0,
        l = 0,
        l2 = 0,
        a = 0,
        cnt = 0;
      for (let y = y0; y < y1; y++) {
        for (let x = x0; x < x1; x++) {
          const p = y * width + x;
          const pr = rgb[p * 3]! / 255,
            pg = rgb[p * 3 + 1]! / 255,
            pb = rgb[p * 3 + 2]! / 255;
          const pl = 0.2126 * pr + 0.7152 * pg + 0.0722 * pb;
          r += pr;
          g += pg;
          b += pb;
          l += pl;
          l2 += pl * pl;
          a += alpha[p]! / 255;
          cnt++;
        }
      }
      const o = j * gw + i;
      R[o] = r / cnt;
      G[o] = g / cnt;
      B[o] = b / cnt;
      L[o] = l / cnt;
      fine[o] = Math.sqrt(Math.max(0, l2 / cnt - (l / cnt) ** 2));
      subj[o] = a / cnt;
    }
  }
  // Texture: fine spread plus the luminance gradient across nodes, averaged over a neighbourhood.
  const grad = new Float32Array(n);
  for (let j = 0; j < gh; j++) {
    for (let i = 0; i < gw; i++) {
      const o = j * gw + i;
      const dx = L[j * gw + Math.min(gw - 1, i + 1)]! - L[j * gw + Math.max(0, i - 1)]!;
      const dy = L[Math.min(gh - 1, j + 1) * gw + i]! - L[Math.max(0, j - 1) * gw + i]!;
      grad[o] = fine[o]! + 0.5 * Math.hypot(dx, dy);
    }
  }
  const tex = blurGrid(grad, gw, gh, 2);

  const skyCand = new Uint8Array(n),
    waterCand = new Float32Array(n),
    foliage = new Float32Array(n);
  for (let o = 0; o < n; o++) {
    const r = R[o]!,
      g = G[o]!,
      b = B[o]!,
      l = L[o]!;
    const mx = Math.max(r, g, b),
      mn = Math.min(r, g, b);
    const sat = mx > 0 ? (mx - mn) / mx : 0;
    const blueish = b > r + 0.03 && b >= g - 0.04;
    const overcast = l > 0.62 && sat < 0.18;
    const t = tex[o]!;
    skyCand[o] = (blueish && l > 0.4) || overcast ? (t < 0.045 ? 1 : 0) : 0;
    // Water is tinted blue/cyan (reflected sky) and at most moderately textured, or a smooth
    // grey sheet; grey with texture is stone, concrete or brick.
    const tinted = b > r + 0.02 && b >= g - 0.08 && l > 0.12 && l < 0.9;
    const sheet = sat < 0.2 && l > 0.15 && l < 0.85;
    waterCand[o] = tinted ? 1 - smooth(0.06, 0.12, t) : sheet ? 1 - smooth(0.02, 0.04, t) : 0;
    const greenish = g > r * 1.04 && g > b * 1.08 && sat > 0.12 && l > 0.06;
    foliage[o] = greenish ? smooth(0.035, 0.08, t) : 0;
  }
  // Sky must be reachable from the top edge through sky-like nodes (column walk with small
  // gaps allowed); a blue shirt or a white wall in the middle is not sky.
  const sky = new Float32Array(n);
  const skyBottom = new Int32Array(gw).fill(-1);
  for (let i = 0; i < gw; i++) {
    let gap = 0;
    for (let j = 0; j < gh; j++) {
      const o = j * gw + i;
      if (skyCand[o]) {
        sky[o] = 1;
        skyBottom[i] = j;
        gap = 0;
      } else if (++gap > 2) break;
    }
  }
  // Water lies below the sky line and spans rows: nodes of rows mostly water-like count.
  const horizon = Math.max(Math.floor(gh * 0.3), ...Array.from(skyBottom));
  const water = new Float32Array(n);
  for (let j = horizon + 1; j < gh; j++) {
    let cover = 0;
    for (let i = 0; i < gw; i++) cover += waterCand[j * gw + i]!;
    if (cover < gw * 0.35) continue;
    for (let i = 0; i < gw; i++) water[j * gw + i] = waterCand[j * gw + i]! * (sky[j * gw + i] ? 0 : 1);
  }
  // Keep motion away from the subject: a dilated, blurred subject coverage suppresses all.
  const keepOut = blurGrid(
    subj.map((v) => (v > 0.02 ? 1 : 0)),
    gw,
    gh,
    Math.max(2, Math.round(Math.min(gw, gh) * 0.02)),
    2,
  );
  const out: Regions = {
    sky: blurGrid(sky, gw, gh, 2),
    water: blurGrid(water, gw, gh, 2),
    foliage: blurGrid(foliage, gw, gh, 2),
    highlight: new Float32Array(n),
  };
  let meanL = 0;
  for (let o = 0; o < n; o++) meanL += L[o]!;
  meanL /= n;
  for (let o = 0; o < n; o++) {
    const free = Math.max(0, 1 - 3 * keepOut[o]!);
    out.sky[o]! *= free;
    out.water[o]! *= free;
    out.foliage[o]! *= free;
    out.highlight[o] = Math.max(out.water[o]!, 0.5 * out.sky[o]!) * smooth(meanL, Math.min(1, meanL + 0.25), L[o]!);
  }
  return out;
}

/** Fraction of the frame each region covers, for meta and docs. */
export function coverage(regions: Regions): Record<'sky' | 'water' | 'foliage', number> {
  const n = regions.sky.length;
  const mean = (f: Float32Array) => Math.round((f.reduce((s, v) => s + v, 0) / n) * 1000) / 1000;
  return { sky: mean(regions.sky), water: mean(regions.water), foliage: mean(regions.foliage) };
}

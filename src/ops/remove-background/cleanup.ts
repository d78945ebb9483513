/**
 * Mask cleanup: keep the subject, drop stray blobs. Salient-object models also light up
 * smaller objects in the backdrop (a fruit, a leaf) and speckle textured areas with weak
 * foreground values. The subject is taken to be the largest connected region of the
 * thresholded mask plus every region of comparable size (multi-part subjects, several
 * products side by side), plus small regions close to those (a detached strap, a gap in the
 * mask). Everything else, including weak values far from what is kept, is cleared.
 */

export interface CleanupParams {
  /** A region at least this share of the largest one's area is kept wherever it is. */
  minShare: number;
  /** A smaller region is kept if it comes within this share of the image diagonal of a kept one. */
  nearShare: number;
  /** Soft (below-threshold) values survive within this share of the diagonal of a kept region. */
  haloShare: number;
}

// Chosen on the bench composites (see docs/ops/remove-background.md, "Mask cleanup").
export const DEFAULT_CLEANUP: CleanupParams = { minShare: 0.15, nearShare: 0.02, haloShare: 0.02 };

/** 8-connected labels of mask >= 128 (0 = background) and each label's area (index = label). */
export function labelRegions(mask: Uint8Array, w: number, h: number): { labels: Int32Array; areas: number[] } {
  const n = w * h;
  const labels = new Int32Array(n);
  const parent: number[] = [0];
  const find = (a: number) => {
    while (parent[a] !== a) a = parent[a] = parent[parent[a]];
    return a;
  };
  const join = (a: number, b: number) => {
    a = find(a);
    b = find(b);
    if (a !== b) parent[Math.max(a, b)] = Math.min(a, b);
    return Math.min(a, b);
  };
  for (let y = 0, i = 0; y < h; y++) {
    for (let x = 0; x < w; x++, i++) {
      if (mask[i] < 128) continue;
      // Already-visited neighbours: left, up-left, up, up-right.
      let l = 0;
      if (x > 0 && labels[i - 1]) l = labels[i - 1];
      if (y > 0) {
        const up = i - w;
        for (const j of [x > 0 ? up - 1 : -1, up, x + 1 < w ? up + 1 : -1]) {
          if (j >= 0 && labels[j]) l = l ? join(l, labels[j]) : labels[j];
        }
      }
      if (!l) {
        l = parent.length;
        parent.push(l);
      }
      labels[i] = l;
    }
  }
  // Flatten to consecutive labels.
  const remap = new Int32Array(parent.length);
  const areas: number[] = [0];
  for (let l = 1; l < parent.length; l++) {
    const root = find(l);
    if (root === l) {
      remap[l] = areas.length;
      areas.push(0);
    }
  }
  for (let i = 0; i < n; i++) {
    if (!labels[i]) continue;
    const l = remap[find(labels[i])];
    labels[i] = l;
    areas[l]++;
  }
  return { labels, areas };
}

/** Approximate Euclidean distance (3-4 chamfer, two passes) from every pixel to the nearest seed. */
export function distanceToSeeds(seed: Uint8Array, w: number, h: number): Float32Array {
  const d = new Float32Array(w * h);
  const far = 1e9;
  for (let i = 0; i < d.length; i++) d[i] = seed[i] ? 0 : far;
  for (let y = 0, i = 0; y < h; y++) {
    for (let x = 0; x < w; x++, i++) {
      let v = d[i];
      if (v === 0) continue;
      if (x > 0) v = Math.min(v, d[i - 1] + 3);
      if (y > 0) {
        v = Math.min(v, d[i - w] + 3);
        if (x > 0) v = Math.min(v, d[i - w - 1] + 4);
        if (x + 1 < w) v = Math.min(v, d[i - w + 1] + 4);
      }
      d[i] = v;
    }
  }
  for (let y = h - 1, i = w * h - 1; y >= 0; y--) {
    for (let x = w - 1; x >= 0; x--, i--) {
      let v = d[i];
      if (v === 0) continue;
      if (x + 1 < w) v = Math.min(v, d[i + 1] + 3);
      if (y + 1 < h) {
        v = Math.min(v, d[i + w] + 3);
        if (x + 1 < w) v = Math.min(v, d[i + w + 1] + 4);
        if (x > 0) v = Math.min(v, d[i + w - 1] + 4);
      }
      d[i] = v;
    }
  }
  for (let i = 0; i < d.length; i++) d[i] /= 3;
  return d;
}

/** Longest side the region analysis runs at: the models' masks carry no finer detail (320 or 1024 px). */
export const ANALYSIS_SIDE = 512;

/**
 * The mask with stray regions and far weak values cleared (a new array; the input is untouched).
 * Regions are found on a nearest-sampled copy no longer than ANALYSIS_SIDE, and the keep/clear
 * decision is read back per pixel; the halo around what is kept covers the sampling error at edges.
 * A mask with no region at or above the threshold is returned unchanged: there is nothing to
 * anchor a choice on, and refinement downstream handles it as before.
 */
export function keepSubject(mask: Uint8Array, w: number, h: number, params: CleanupParams = DEFAULT_CLEANUP): Uint8Array {
  const f = Math.max(1, Math.ceil(Math.max(w, h) / ANALYSIS_SIDE));
  const lw = Math.ceil(w / f), lh = Math.ceil(h / f);
  let low = mask;
  if (f > 1) {
    low = new Uint8Array(lw * lh);
    for (let y = 0, k = 0; y < lh; y++) {
      const row = Math.min(h - 1, y * f + (f >> 1)) * w;
      for (let x = 0; x < lw; x++, k++) low[k] = mask[row + Math.min(w - 1, x * f + (f >> 1))];
    }
  }
  const keepLow = keepMap(low, lw, lh, params);
  if (!keepLow) return mask;
  const out = new Uint8Array(w * h);
  for (let y = 0, i = 0; y < h; y++) {
    const row = ((y / f) | 0) * lw;
    for (let x = 0; x < w; x++, i++) if (keepLow[row + ((x / f) | 0)]) out[i] = mask[i];
  }
  return out;
}

/** 1 where the mask's value is kept, at the mask's own resolution; undefined when nothing is confident. */
function keepMap(mask: Uint8Array, w: number, h: number, params: CleanupParams): Uint8Array | undefined {
  const { labels, areas } = labelRegions(mask, w, h);
  if (areas.length <= 1) return undefined;
  const largest = Math.max(...areas);
  const diag = Math.hypot(w, h);
  const keep = new Uint8Array(areas.length);
  for (let l = 1; l < areas.length; l++) if (areas[l] >= params.minShare * largest) keep[l] = 1;

  const n = w * h;
  const seed = new Uint8Array(n);
  for (let i = 0; i < n; i++) if (keep[labels[i]]) seed[i] = 1;
  const near = Math.max(2, params.nearShare * diag);
  if (areas.length > 2) {
    const dist = distanceToSeeds(seed, w, h);
    for (let i = 0; i < n; i++) {
      const l = labels[i];
      if (l && !keep[l] && dist[i] <= near) keep[l] = 2;
    }
    for (let i = 0; i < n; i++) if (keep[labels[i]] === 2) seed[i] = 1;
  }
  const dist = distanceToSeeds(seed, w, h);
  const halo = Math.max(2, params.haloShare * diag);
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const l = labels[i];
    out[i] = l ? (keep[l] ? 1 : 0) : dist[i] <= halo ? 1 : 0;
  }
  return out;
}

/**
 * Region tools for the mask fusion (fusion.ts) and the colour rules: connected-component
 * labelling of a thresholded mask, a square dilation of a 0/1 grid and a fast distance transform.
 */

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
        // Written out rather than looping over an array of the three, which allocated per pixel.
        const up = i - w;
        if (x > 0 && labels[up - 1]) l = l ? join(l, labels[up - 1]) : labels[up - 1];
        if (labels[up]) l = l ? join(l, labels[up]) : labels[up];
        if (x + 1 < w && labels[up + 1]) l = l ? join(l, labels[up + 1]) : labels[up + 1];
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
  let seeds = 0;
  for (let i = 0; i < d.length; i++) {
    if (seed[i]) seeds++;
    d[i] = seed[i] ? 0 : far;
  }
  // No seed (e.g. no kept blob with one model): every pixel stays far, as the passes would leave it.
  if (!seeds) return d.fill(far / 3);
  // lower() rather than Math.min, whose NaN and -0 handling these non-negative sums never need.
  for (let y = 0, i = 0; y < h; y++) {
    for (let x = 0; x < w; x++, i++) {
      let v = d[i]!;
      if (v === 0) continue;
      if (x > 0) v = lower(v, d[i - 1]! + 3);
      if (y > 0) {
        v = lower(v, d[i - w]! + 3);
        if (x > 0) v = lower(v, d[i - w - 1]! + 4);
        if (x + 1 < w) v = lower(v, d[i - w + 1]! + 4);
      }
      d[i] = v;
    }
  }
  for (let y = h - 1, i = w * h - 1; y >= 0; y--) {
    for (let x = w - 1; x >= 0; x--, i--) {
      let v = d[i]!;
      if (v === 0) continue;
      if (x + 1 < w) v = lower(v, d[i + 1]! + 3);
      if (y + 1 < h) {
        v = lower(v, d[i + w]! + 3);
        if (x + 1 < w) v = lower(v, d[i + w + 1]! + 4);
        if (x > 0) v = lower(v, d[i + w - 1]! + 4);
      }
      d[i] = v;
    }
  }
  for (let i = 0; i < d.length; i++) d[i] /= 3;
  return d;
}

/** The smaller of two non-NaN numbers (Math.min without its NaN and -0 cases, in the chamfer's inner loop). */
function lower(v: number, c: number): number {
  return c < v ? c : v;
}

/** Marks every cell within r cells (a square) of a marked one. */
export function dilate(src: Uint8Array, w: number, h: number, r: number): Uint8Array {
  const rows = new Uint8Array(src.length);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      if (!src[y * w + x]) continue;
      for (let xx = Math.max(0, x - r); xx <= Math.min(w - 1, x + r); xx++) rows[y * w + xx] = 1;
    }
  const out = new Uint8Array(src.length);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      if (!rows[y * w + x]) continue;
      for (let yy = Math.max(0, y - r); yy <= Math.min(h - 1, y + r); yy++) out[yy * w + x] = 1;
    }
  return out;
}

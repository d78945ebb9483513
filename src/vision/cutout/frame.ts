/**
 * Backdrop objects cut by the frame.
 *
 * Both models were trained on photos whose subject is whole, so a large, vivid backdrop object
 * (half an orange filling a fruit-stall photo, a plant pot, a strip of mortar) often wins their
 * saliency over the product placed in front of it, and the mask becomes product + backdrop object
 * in one piece. What tells them apart is the frame: the backdrop object runs out of the picture,
 * the product does not. This is the boundary-connectivity prior of classic saliency work (Wei et
 * al. 2012, "Geodesic saliency using background priors"; Zhu et al. 2014, "Saliency optimization
 * from robust background detection"): a region that can be reached from the image border without
 * crossing a strong image edge is backdrop.
 *
 * Inside the mask, a geodesic distance from the mask's pixels on the frame is computed, each
 * step costing a little plus how much the colour gradient there exceeds the image's mean gradient.
 * The product is closed by its outline (a strong edge all round), so it stays far; the backdrop
 * object's own surface is reached cheaply. The far part is returned only when it is worth keeping
 * (a real share of the mask, confident in both models); a subject that itself runs out of the
 * frame (a dress cut at the hem) is reached nearly everywhere and is left alone.
 */

export interface FrameParams {
  /** Geodesic distance (in steps of a gradient-free path ~ `step` each) beyond which a pixel is enclosed. */
  reach: number;
  /** Cost of one step on a flat surface; edges add their gradient above the image mean. */
  step: number;
  /** The frame-reached part must be at least this share of the mask to be worth removing. */
  minCutShare: number;
  /** The enclosed part must be at least this share of the mask (else the subject is what runs out of the frame). */
  minKeepShare: number;
  /** The cut grows through the mask's pixels whose colour is this many times more frequent in it than in the rest (0: no growth). */
  colourRatio?: number;
  /** With two models: one confident on less than this share of the cut does not see the backdrop object, and where it is confident is the product (fusion.ts). */
  blindShare: number;
  /** With two models: blocks of the cut where both are at least this (saturated) on most pixels, connected to the uncut mask, are the product (fusion.ts). */
  certain: number;
  /** With two models: cut each model's mask on its own and unite the cuts, rather than cutting their union (fusion.ts). */
  perModel?: boolean;
}

export const DEFAULT_FRAME: FrameParams = {
  reach: 10,
  step: 0.05,
  minCutShare: 0.2,
  minKeepShare: 0.05,
  colourRatio: 1,
  blindShare: 0.2,
  certain: 255,
  perModel: true,
};

/**
 * The image at analysis resolution: means of f x f blocks, RGB interleaved. The sums are kept
 * as integers (exact, as the float sums they replace were up to f = 256) and each block's pixel
 * count follows from its place, so a row of blocks is summed without a division per pixel.
 */
export function blockMeans(image: { data: Uint8Array; channels: number }, w: number, h: number, f: number, lw: number, lh: number): Float32Array {
  const c = image.channels;
  const data = image.data;
  const n = lw * lh;
  const sums = new Uint32Array(n * 3);
  for (let y = 0; y < h; y++) {
    let k = ((y / f) | 0) * lw * 3;
    let j = y * w * c;
    for (let x0 = 0; x0 < w; x0 += f, k += 3) {
      const x1 = Math.min(w, x0 + f);
      let r = 0,
        g = 0,
        b = 0;
      for (let x = x0; x < x1; x++, j += c) {
        r += data[j]!;
        g += data[j + 1]!;
        b += data[j + 2]!;
      }
      sums[k]! += r;
      sums[k + 1]! += g;
      sums[k + 2]! += b;
    }
  }
  const rgb = new Float32Array(n * 3);
  for (let by = 0, k = 0; by < lh; by++) {
    const rows = Math.min(h, (by + 1) * f) - by * f;
    for (let bx = 0; bx < lw; bx++, k += 3) {
      const count = rows * (Math.min(w, (bx + 1) * f) - bx * f);
      rgb[k] = sums[k]! / count;
      rgb[k + 1] = sums[k + 1]! / count;
      rgb[k + 2] = sums[k + 2]! / count;
    }
  }
  return rgb;
}

/**
 * Colour gradient magnitude at analysis resolution (block means of f x f, then central differences), divided by its mean.
 * `rgb`: the image's blockMeans when the caller has them already (fusion.ts needs both).
 */
export function colourEdges(
  image: { data: Uint8Array; channels: number },
  w: number,
  h: number,
  f: number,
  lw: number,
  lh: number,
  rgb: Float32Array = blockMeans(image, w, h, f, lw, lh),
): Float32Array {
  const n = lw * lh;
  const g = new Float32Array(n);
  let sum = 0;
  for (let y = 1; y < lh - 1; y++) {
    for (let x = 1, i = y * lw + 1; x < lw - 1; x++, i++) {
      let s = 0;
      for (let ch = 0; ch < 3; ch++) {
        const dx = rgb[(i + 1) * 3 + ch] - rgb[(i - 1) * 3 + ch];
        const dy = rgb[(i + lw) * 3 + ch] - rgb[(i - lw) * 3 + ch];
        s += dx * dx + dy * dy;
      }
      g[i] = Math.sqrt(s);
      sum += g[i];
    }
  }
  const mean = sum / n || 1;
  for (let i = 0; i < n; i++) g[i] /= mean;
  return g;
}

/**
 * Geodesic distance inside `inside` (1 = in) from its pixels on the frame, 4-connected, each step
 * costing `step` plus the mean edge strength of its two ends above 1 (the image's mean gradient).
 * Infinity where no path from the frame exists. Dijkstra over a typed binary heap.
 */
export function frameDistance(inside: Uint8Array, edges: Float32Array, w: number, h: number, step: number): Float64Array {
  const n = w * h;
  const dist = new Float64Array(n).fill(Infinity);
  const heapD = new Float64Array(4 * n + 4);
  const heapI = new Int32Array(4 * n + 4);
  let size = 0;
  const push = (d: number, i: number) => {
    let c = size++;
    while (c > 0) {
      const p = (c - 1) >> 1;
      if (heapD[p] <= d) break;
      heapD[c] = heapD[p];
      heapI[c] = heapI[p];
      c = p;
    }
    heapD[c] = d;
    heapI[c] = i;
  };
  const popInto = (): number => {
    const top = heapI[0];
    const d = heapD[--size];
    const i = heapI[size];
    let c = 0;
    for (;;) {
      const l = 2 * c + 1;
      if (l >= size) break;
      const r = l + 1;
      const s = r < size && heapD[r] < heapD[l] ? r : l;
      if (heapD[s] >= d) break;
      heapD[c] = heapD[s];
      heapI[c] = heapI[s];
      c = s;
    }
    heapD[c] = d;
    heapI[c] = i;
    return top;
  };
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      if (inside[i] && (x === 0 || y === 0 || x === w - 1 || y === h - 1)) {
        dist[i] = 0;
        push(0, i);
      }
    }
  }
  const done = new Uint8Array(n);
  while (size > 0) {
    const i = popInto();
    if (done[i]) continue;
    done[i] = 1;
    const d = dist[i];
    const x = i % w;
    const relax = (j: number) => {
      if (!inside[j] || done[j]) return;
      const nd = d + step + Math.max(0, (edges[i] + edges[j]) / 2 - 1);
      if (nd < dist[j]) {
        dist[j] = nd;
        push(nd, j);
      }
    };
    if (x > 0) relax(i - 1);
    if (x < w - 1) relax(i + 1);
    if (i >= w) relax(i - w);
    if (i < n - w) relax(i + w);
  }
  return dist;
}

/**
 * The part of the mask (`inside`, analysis resolution) that is backdrop cut by the frame, as 1s,
 * or undefined when there is none worth removing (see the module comment).
 */
export function frameCut(
  inside: Uint8Array,
  edges: Float32Array,
  w: number,
  h: number,
  p: FrameParams = DEFAULT_FRAME,
  colours?: Float32Array,
): Uint8Array | undefined {
  let area = 0;
  let onFrame = 0;
  for (let y = 0, i = 0; y < h; y++) {
    for (let x = 0; x < w; x++, i++) {
      if (!inside[i]) continue;
      area++;
      if (x === 0 || y === 0 || x === w - 1 || y === h - 1) onFrame++;
    }
  }
  if (!onFrame || !area) return undefined;
  const dist = frameDistance(inside, edges, w, h, p.step);
  const cut = new Uint8Array(w * h);
  let cutArea = 0;
  for (let i = 0; i < cut.length; i++) {
    if (inside[i] && dist[i] < p.reach) {
      cut[i] = 1;
      cutArea++;
    }
  }
  if (cutArea < p.minCutShare * area || area - cutArea < p.minKeepShare * area) return undefined;
  if (p.colourRatio && colours) {
    // Pieces of the backdrop object walled off by its own edges (an orange's segments) share its
    // colours; the product's colours are rare in it.
    const bin = (k: number) => ((colours[k * 3] >> 4) << 8) | ((colours[k * 3 + 1] >> 4) << 4) | (colours[k * 3 + 2] >> 4);
    const hc = new Float64Array(4096);
    const he = new Float64Array(4096);
    for (let i = 0; i < cut.length; i++) {
      if (!inside[i]) continue;
      if (cut[i]) hc[bin(i)]++;
      else he[bin(i)]++;
    }
    const keepArea = area - cutArea;
    const ratio = p.colourRatio;
    const likeCut = (i: number) => {
      const b = bin(i);
      return hc[b] / cutArea > ratio * (he[b] / keepArea);
    };
    // Grown from the cut through such pixels only, so a product's own patches of a similar colour
    // (an orange crown's faces) that the cut does not reach stay.
    const stack: number[] = [];
    for (let i = 0; i < cut.length; i++) if (cut[i]) stack.push(i);
    while (stack.length) {
      const i = stack.pop()!;
      const x = i % w;
      for (const j of [x > 0 ? i - 1 : -1, x < w - 1 ? i + 1 : -1, i - w, i + w]) {
        if (j < 0 || j >= cut.length || cut[j] || !inside[j] || !likeCut(j)) continue;
        cut[j] = 1;
        stack.push(j);
      }
    }
  }
  return cut;
}

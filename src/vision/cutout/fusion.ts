/**
 * Mask fusion and cleanup that keep every part of the subject.
 *
 * Two models (ISNet, fine; U2-Net-p, coarse, a different network trained on different data) each
 * give a soft mask. Keeping only where both agree (their minimum) drops whatever only one of them
 * finds: ear cups, a lens, a trophy's base, a fish's tail. Keeping their union keeps what only one
 * of them hallucinates in the backdrop. So the masks are split into
 *  - cores: connected regions where both are confident (min >= 128), and
 *  - blobs: connected regions where only one is (max >= 128 > min),
 * and each is judged on its own:
 *  - a core is kept if it is the main body (the largest core), of comparable size to it
 *    (several products side by side), or close to a kept core (a detached part both models see);
 *  - a blob near a kept core, attached or not, is kept if the other model leans towards it (its
 *    mean soft value there is well above zero: the part is seen, only not confidently); a backdrop
 *    region only one model likes gets ~0 from the other. How much of a blob's outline touches the
 *    body did not separate the two on the bench set (docs/ops/remove-background.md).
 * The soft value is the union (max) on and right next to kept blobs, so a part found by one model
 * keeps that model's edge, and the agreement (min) elsewhere, which gives the tighter boundary
 * band. Weak values survive only close to what is kept. When the models pick different objects
 * (little overlap), the one whose outline follows stronger image edges is used alone. A part
 * neither model sees at all is taken from the image when it looks like one next to the body
 * (image-parts.ts: a smooth, strongly outlined region amid a busy backdrop).
 *
 * `keep` chooses what the user wants: `auto` (above), `largest` (only the largest kept region,
 * one connected object), `all` (every region either model is confident about, minus specks).
 */
import { distanceToSeeds, labelRegions } from './cleanup.js';
import { analysisGrid, blockMeans, colourEdges } from './colours.js';
import { DEFAULT_IMAGE_PARTS, imageParts, type ImagePartParams } from './image-parts.js';

export type Keep = 'auto' | 'largest' | 'all';

export interface FusionParams {
  /** A core at least this share of the main core's area is kept wherever it is. */
  minShare: number;
  /** A smaller core is kept within this share of the image diagonal of a kept one. */
  nearShare: number;
  /** A blob (one model confident) within this share of the image diagonal of a kept core is near the body. */
  partNearShare: number;
  /** A blob kept must be at least this thick (area / outline pixels: a line 3 px wide is ~1.5; mortar lines, edge slivers). */
  partThickness: number;
  /**
   * A blob is kept when it is at least this share of the main core's area. (The support rule: a
   * blob near the body kept when the other model's mean on it was at least 0.1, was removed in
   * round 12: it failed the do-no-harm gate, docs/ops/remove-background.md.)
   */
  sureShare: number;
  /** ...the confident model's mean on it is at least this (0..1), */
  sureConfidence: number;
  /** ...and its outline against the backdrop runs along edges this many times the image's mean gradient; */
  sureEdge: number;
  /** A blob near a kept core (partNearShare) at least this share of the main core's area, as confident (sureConfidence), is kept whatever the other model says. */
  nearSureShare: number;
  /** Soft (below-threshold) values survive within this share of the diagonal of what is kept. */
  haloShare: number;
  /** Regions smaller than this share of the image are specks (`all` drops them). */
  speckShare: number;
  /** Parts only the image shows, next to the body (image-parts.ts); undefined to skip. Two models, `auto` only. */
  imageParts?: ImagePartParams;
  /**
   * Model first (round 11): a region the primary model (ISNet) is confident on, near a kept core
   * or of comparable size, is kept whatever the other model says, and the primary's soft values
   * draw the edge of what is kept; the second model only adds parts.
   */
  primaryFirst?: boolean;
  /** The trust test (one model alone when the other lost the subject or picked another object); false only to measure it. */
  trust?: boolean;
}

// Chosen on the bench's evaluation set (bench/remove-background-set.mjs); docs/ops/remove-background.md.
export const DEFAULT_FUSION: FusionParams = {
  minShare: 0.15,
  nearShare: 0.02,
  partNearShare: 0.1,
  partThickness: 2,
  sureShare: 0.5,
  sureConfidence: 0.95,
  sureEdge: 3,
  nearSureShare: 0.3,
  haloShare: 0.02,
  speckShare: 0.0005,
  imageParts: DEFAULT_IMAGE_PARTS,
  primaryFirst: true,
};

/** A kept part: a connected region of the final mask (alpha >= 128), in image pixels. */
export interface MaskPart {
  area: number;
  left: number;
  top: number;
  width: number;
  height: number;
}

export interface Fused {
  /** Soft mask, width*height, 0..255. */
  mask: Uint8Array;
  /** The kept parts, largest first (empty when nothing was confident). */
  parts: MaskPart[];
}

/** Longest side the region analysis runs at: the models' masks carry no finer detail. */
export const FUSION_SIDE = 512;

function nearestDown(mask: Uint8Array, w: number, h: number, f: number): Uint8Array {
  if (f === 1) return mask;
  const lw = Math.ceil(w / f),
    lh = Math.ceil(h / f);
  const low = new Uint8Array(lw * lh);
  for (let y = 0, k = 0; y < lh; y++) {
    const row = Math.min(h - 1, y * f + (f >> 1)) * w;
    for (let x = 0; x < lw; x++, k++) low[k] = mask[row + Math.min(w - 1, x * f + (f >> 1))];
  }
  return low;
}

export interface FusionInput {
  /** The finer model's soft mask (ISNet), width*height. */
  primary: Uint8Array;
  /** The other model's (U2-Net-p); undefined to clean one model's mask. */
  second?: Uint8Array;
  /** The image (interleaved, 3 or 4 channels): its edges settle which model to trust when they disagree. */
  image: { data: Uint8Array; channels: number };
  width: number;
  height: number;
}

/** Fuses the two models' soft masks (or cleans one) at full resolution. */
export function fuseMasks(input: FusionInput, keep: Keep = 'auto', params: FusionParams = DEFAULT_FUSION): Fused {
  const { width: w, height: h, image } = input;
  const n = w * h;
  const { f, lw, lh } = analysisGrid(w, h, FUSION_SIDE);
  const primary = input.primary;
  let second = input.second;
  // The primary's mask on the analysis grid: the trust test and the model-first rules read it (taken once).
  let primaryLowMemo: Uint8Array | undefined;
  const primaryLowOnce = () => (primaryLowMemo ??= nearestDown(primary, w, h, f));
  // With two models, their masks on the analysis grid, for the trust test.
  if (second && params.trust !== false) {
    // The second model's mask is the primary's when the primary decided alone (primaryDecisive): no second copy.
    const secondLow = second === primary ? primaryLowOnce() : nearestDown(second, w, h, f);
    const which = trustworthy(primaryLowOnce(), secondLow, () => edgeMap(image, w, h, f, lw, lh), lw, lh);
    if (which === 'second') return fuseMasks({ ...input, primary: second, second: undefined }, keep, params);
    if (which === 'primary') second = undefined;
  }
  const lo = new Uint8Array(n);
  const hi = new Uint8Array(n);
  if (second) {
    for (let i = 0; i < n; i++) {
      const a = primary[i],
        b = second[i];
      if (a < b) {
        lo[i] = a;
        hi[i] = b;
      } else {
        lo[i] = b;
        hi[i] = a;
      }
    }
  } else {
    lo.set(primary);
    hi.set(primary);
  }
  let coloursMemo: Float32Array | undefined;
  const colours = () => (coloursMemo ??= blockMeans(image, w, h, f, lw, lh));
  let edgesMemo: Float32Array | undefined;
  // The edges are computed from the same block means, once per image.
  const edges = () => (edgesMemo ??= colourEdges(image, w, h, f, lw, lh, colours()));
  // The union on the analysis grid; decide() and image-parts only read it.
  const hiLow = nearestDown(hi, w, h, f);
  // Model first with two models: ISNet's mask is the start, also when the trust test set U2-Net-p aside.
  const ownEdge = !!params.primaryFirst && !!input.second;
  const primaryLow = ownEdge || second ? primaryLowOnce() : undefined;
  const choice = decide(nearestDown(lo, w, h, f), hiLow, edges, lw, lh, keep, params, primaryLow);
  // Model first: nothing confident anywhere leaves the primary's mask as it is (the plain model's).
  if (!choice) return { mask: ownEdge ? primary.slice() : lo, parts: [] };
  const { keepAll, keepHi } = choice;
  const diag = Math.hypot(lw, lh);
  const halo = Math.max(2, params.haloShare * diag);
  const dAll = distanceToSeeds(keepAll, lw, lh);
  const dHi = distanceToSeeds(keepHi, lw, lh);
  const mask = ownEdge ? modelFirstMask(primary, hi, primaryLow!, keepAll, dAll, dHi, halo, w, h, f, lw) : new Uint8Array(n);
  if (!ownEdge) {
    for (let y = 0, i = 0; y < h; y++) {
      const row = ((y / f) | 0) * lw;
      for (let x = 0; x < w; x++, i++) {
        const k = row + ((x / f) | 0);
        // The union only on and right next to a kept blob: elsewhere the agreement draws the edge.
        if (dHi[k] <= 2) mask[i] = hi[i];
        else if (dAll[k] <= halo) mask[i] = lo[i];
      }
    }
  }
  // A part neither model sees but the image shows next to the body (image-parts.ts). Only with
  // two models: both silent there is what the rule asks (one model alone is often silent on parts).
  if (second && keep === 'auto' && params.imageParts) {
    const found = imageParts({ colours: colours(), edges: edges(), body: keepAll, hi: hiLow, distance: dAll, width: lw, height: lh }, params.imageParts).add;
    if (found) {
      for (let y = 0, i = 0; y < h; y++) {
        const row = ((y / f) | 0) * lw;
        for (let x = 0; x < w; x++, i++) if (found[row + ((x / f) | 0)]) mask[i] = 255;
      }
    }
  }
  return { mask, parts: partsOf(mask, w, h, params.speckShare) };
}

/**
 * Model first (round 12): the primary's mask (ISNet's, the plain model's) is the start and stays
 * as it is wherever no rule decided, so where the selection keeps all the primary finds and adds
 * nothing, the cut-out is bit for bit the plain model's. Only two things change it:
 *  - a part only the second model is confident on that a rule kept (keepHi): the union (max) on and
 *    right next to it, so it keeps that model's edge;
 *  - a region the primary is confident on that the selection dropped (a stray object far from the
 *    subject): it and its soft fringe (within the halo) become 0, unless within the halo of
 *    what is kept. The primary's weak values elsewhere are left as they are: no rule saw them.
 */
function modelFirstMask(
  primary: Uint8Array,
  hi: Uint8Array,
  primaryLow: Uint8Array,
  keepAll: Uint8Array,
  dAll: Float32Array,
  dHi: Float32Array,
  halo: number,
  w: number,
  h: number,
  f: number,
  lw: number,
): Uint8Array {
  const mask = primary.slice();
  const dropped = new Uint8Array(keepAll.length);
  let any = false;
  for (let k = 0; k < dropped.length; k++) {
    if (primaryLow[k]! >= 128 && !keepAll[k]) {
      dropped[k] = 1;
      any = true;
    }
  }
  const dDrop = any ? distanceToSeeds(dropped, lw, keepAll.length / lw) : undefined;
  for (let y = 0, i = 0; y < h; y++) {
    const row = ((y / f) | 0) * lw;
    for (let x = 0; x < w; x++, i++) {
      const k = row + ((x / f) | 0);
      if (dHi[k]! <= 2) mask[i] = hi[i]!;
      else if (dDrop && dDrop[k]! <= halo && dAll[k]! > halo) mask[i] = 0;
    }
  }
  return mask;
}

/**
 * Whether the primary's (ISNet's) mask alone settles the cut-out, so the second model (U2-Net-p,
 * about a sixth of the default mode's time) need not run: one confident region of at least
 * DECISIVE.subject of the frame, no other region above DECISIVE.speck, and a weak fringe (values
 * 26..229) smaller than DECISIVE.fringe of the confident area. Where ISNet lost the subject,
 * found a few separate things, left much of it half-decided, or the subject is small (its small
 * parts are what U2-Net-p adds: a trophy on brick, ISNet confident on 9.6% of the frame and on one
 * region, loses its plinth without U2-Net-p, test/ops/remove-background/multipart.test.ts), the
 * second model's parts and the trust test are what the fusion needs. Measured with the second
 * model replaced by the primary (docs/ops/remove-background.md, round 13): on the framing set
 * the 58 of 99 cases this passes give the same fused mask, bar 0.01% of one case's pixels; on the
 * 16 fixture and sample photos, 9 pass and their cut-outs are the same.
 */
export const DECISIVE = { subject: 0.12, fringe: 0.45, speck: 0.002 } as const;

export function primaryDecisive(primary: Uint8Array, w: number, h: number): boolean {
  const { f, lw, lh } = analysisGrid(w, h, FUSION_SIDE);
  const low = nearestDown(primary, w, h, f);
  let confident = 0,
    weak = 0;
  for (let k = 0; k < low.length; k++) {
    const v = low[k]!;
    if (v >= 128) confident++;
    if (v > 25 && v < 230) weak++;
  }
  const n = low.length;
  if (confident < DECISIVE.subject * n || weak >= DECISIVE.fringe * confident) return false;
  const { areas } = labelRegions(low, lw, lh);
  let regions = 0;
  for (let l = 1; l < areas.length; l++) if (areas[l]! > DECISIVE.speck * n) regions++;
  return regions === 1;
}

/** Below this share of the primary's area, the primary lost the subject (seen: a low-contrast subject over a face). */
export const LOST_SHARE = 0.1;
/** Below this overlap, as a share of the smaller of the two masks, the models picked different objects. */
export const AGREE_SHARE = 0.5;

/**
 * Whether to fuse both masks or trust one. When one model finds (almost) nothing, the other is used;
 * when they overlap little they picked different objects, and the mask whose outline runs along
 * stronger image edges (relative to the image's own mean gradient, so textures do not win) is
 * used alone: a real object's outline follows its edges, a wrong pick cuts through surfaces.
 */
function trustworthy(a: Uint8Array, b: Uint8Array, edges: () => Float32Array, w: number, h: number): 'both' | 'primary' | 'second' {
  let na = 0,
    nb = 0,
    nab = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] >= 128,
      y = b[i] >= 128;
    if (x) na++;
    if (y) nb++;
    if (x && y) nab++;
  }
  if (na < LOST_SHARE * nb) return 'second';
  if (nb < LOST_SHARE * na) return 'primary';
  if (nab >= AGREE_SHARE * Math.min(na, nb)) return 'both';
  const g = edges();
  return outlineStrength(b, g, w, h) > outlineStrength(a, g, w, h) ? 'second' : 'primary';
}

/** Gradient magnitude of luma at analysis resolution, divided by its mean. */
function edgeMap(image: { data: Uint8Array; channels: number }, w: number, h: number, f: number, lw: number, lh: number): Float32Array {
  const L = new Float32Array(lw * lh);
  const c = image.channels;
  for (let y = 0, k = 0; y < lh; y++) {
    const row = Math.min(h - 1, y * f + (f >> 1)) * w;
    for (let x = 0; x < lw; x++, k++) {
      const j = (row + Math.min(w - 1, x * f + (f >> 1))) * c;
      L[k] = 0.299 * image.data[j] + 0.587 * image.data[j + 1] + 0.114 * image.data[j + 2];
    }
  }
  const G = new Float32Array(lw * lh);
  let sum = 0;
  for (let y = 1; y < lh - 1; y++) {
    for (let x = 1, i = y * lw + 1; x < lw - 1; x++, i++) {
      G[i] = Math.hypot(L[i + 1] - L[i - 1], L[i + lw] - L[i - lw]);
      sum += G[i];
    }
  }
  const mean = sum / (lw * lh) || 1;
  for (let i = 0; i < G.length; i++) G[i] /= mean;
  return G;
}

/** Mean of the edge map on the mask's outline (pixels >= 128 with a 4-neighbour below). */
function outlineStrength(m: Uint8Array, g: Float32Array, w: number, h: number): number {
  let sum = 0,
    count = 0;
  for (let y = 1; y < h - 1; y++) {
    for (let x = 1, i = y * w + 1; x < w - 1; x++, i++) {
      if (m[i] < 128) continue;
      if (m[i - 1] < 128 || m[i + 1] < 128 || m[i - w] < 128 || m[i + w] < 128) {
        sum += g[i];
        count++;
      }
    }
  }
  return count ? sum / count : 0;
}

interface Choice {
  /** 1 on every kept pixel (cores and blobs) at analysis resolution. */
  keepAll: Uint8Array;
  /** 1 on kept blob pixels (where only one model is confident). */
  keepHi: Uint8Array;
}

/** The keep decision at analysis resolution; undefined when neither model is confident anywhere. */
function decide(
  lo: Uint8Array,
  hi: Uint8Array,
  edges: () => Float32Array,
  w: number,
  h: number,
  keep: Keep,
  p: FusionParams,
  primary?: Uint8Array,
): Choice | undefined {
  const n = w * h;
  const diag = Math.hypot(w, h);
  const cores = labelRegions(lo, w, h);
  const blobMask = new Uint8Array(n);
  for (let i = 0; i < n; i++) if (hi[i] >= 128 && lo[i] < 128) blobMask[i] = 255;
  const blobs = labelRegions(blobMask, w, h);
  if (cores.areas.length <= 1 && blobs.areas.length <= 1) return undefined;
  const keepAll = new Uint8Array(n);
  const keepHi = new Uint8Array(n);

  if (keep === 'all') {
    // Every region either model is confident about, minus specks.
    const union = labelRegions(hi, w, h);
    const speck = p.speckShare * n;
    for (let i = 0; i < n; i++) if (union.labels[i] && union.areas[union.labels[i]] >= speck) keepAll[i] = 1;
    // Where only one model is confident, keep its value: every salient object counts.
    for (let i = 0; i < n; i++) if (keepAll[i] && lo[i] < 128) keepHi[i] = 1;
    return { keepAll, keepHi };
  }

  // No core at all (the models disagree everywhere): the largest blob is the body.
  if (cores.areas.length <= 1) {
    const best = argmax(blobs.areas);
    for (let i = 0; i < n; i++) {
      if (blobs.labels[i] !== best) continue;
      keepAll[i] = 1;
      // Model first: the union only where the primary is not confident.
      if (!(p.primaryFirst && primary) || primary[i]! < 128) keepHi[i] = 1;
    }
  } else {
    const coreKeep = keepCores(cores, w, h, diag, p);
    for (let i = 0; i < n; i++) if (coreKeep[cores.labels[i]]) keepAll[i] = 1;
    if (blobs.areas.length > 1) keepBlobs(blobs, keepAll, keepHi, hi, edges(), w, h, diag, cores.areas[argmax(cores.areas)], p, primary);
  }
  if (keep === 'largest') {
    // Only the largest connected object of what auto keeps.
    const kept = labelRegions(
      keepAll.map((v) => v * 255),
      w,
      h,
    );
    const best = argmax(kept.areas);
    for (let i = 0; i < n; i++) {
      if (kept.labels[i] !== best) {
        keepAll[i] = 0;
        keepHi[i] = 0;
      }
    }
  }
  return { keepAll, keepHi };
}

function argmax(areas: number[]): number {
  let best = 1;
  for (let l = 2; l < areas.length; l++) if (areas[l] > areas[best]) best = l;
  return best;
}

/** Cores: the main one, every comparable one, and small ones close to those (cleanup.ts's rule). */
function keepCores(cores: { labels: Int32Array; areas: number[] }, w: number, h: number, diag: number, p: FusionParams): Uint8Array {
  const { labels, areas } = cores;
  const largest = areas[argmax(areas)];
  const keep = new Uint8Array(areas.length);
  for (let l = 1; l < areas.length; l++) if (areas[l] >= p.minShare * largest) keep[l] = 1;
  if (areas.length > 2) {
    const seed = new Uint8Array(w * h);
    for (let i = 0; i < seed.length; i++) if (keep[labels[i]]) seed[i] = 1;
    const dist = distanceToSeeds(seed, w, h);
    // Model first: a smaller core the primary is sure of is part of the subject within the reach
    // of a part (partNearShare); only farther than that is it a stray object.
    const near = Math.max(2, (p.primaryFirst ? Math.max(p.nearShare, p.partNearShare) : p.nearShare) * diag);
    for (let i = 0; i < seed.length; i++) if (labels[i] && !keep[labels[i]] && dist[i] <= near) keep[labels[i]] = 2;
  }
  return keep;
}

/**
 * Blobs (one model confident): model first, the primary's near the body or of comparable size are
 * kept; the second model's only when it is sure of a body-sized region closed by a strong image
 * edge (sure) or of a large part right next to the body (near-sure). Round 12 removed the support
 * rule (a blob near the body kept when the other model leaned towards it, mean >= 0.1): it cost
 * the headphones over the fruit stall, a person on the fruit stall and glasses beside a herb more
 * than it gained in their categories (docs/ops/remove-background.md, round 12).
 */
function keepBlobs(
  blobs: { labels: Int32Array; areas: number[] },
  keepAll: Uint8Array,
  keepHi: Uint8Array,
  hi: Uint8Array,
  edges: Float32Array,
  w: number,
  h: number,
  diag: number,
  mainArea: number,
  p: FusionParams,
  primary?: Uint8Array,
): void {
  const { labels, areas } = blobs;
  const m = areas.length;
  const primaryCount = new Float64Array(m);
  const confidence = new Float64Array(m);
  const outline = new Float64Array(m);
  // Edge strength along the blob's outline against the backdrop (not against the body).
  const rim = new Float64Array(m);
  const rimCount = new Float64Array(m);
  const nearest = new Float64Array(m).fill(Infinity);
  const framed = new Uint8Array(m);
  const dist = distanceToSeeds(keepAll, w, h);
  for (let y = 0, i = 0; y < h; y++) {
    for (let x = 0; x < w; x++, i++) {
      const l = labels[i];
      if (!l) continue;
      confidence[l] += hi[i];
      if (primary && primary[i] >= 128) primaryCount[l]++;
      if (dist[i] < nearest[l]) nearest[l] = dist[i];
      const edge = x === 0 || y === 0 || x === w - 1 || y === h - 1;
      if (edge) framed[l] = 1;
      if (edge || labels[i - 1] !== l || labels[i + 1] !== l || labels[i - w] !== l || labels[i + w] !== l) {
        outline[l]++;
        // On the frame the outline is the picture's, not the object's: it counts as no edge.
        if (edge || hi[i - 1] < 128 || hi[i + 1] < 128 || hi[i - w] < 128 || hi[i + w] < 128) {
          rim[l] += edge ? 0 : edges[i];
          rimCount[l]++;
        }
      }
    }
  }
  const partNear = Math.max(2, p.partNearShare * diag);
  const keep = new Uint8Array(m);
  for (let l = 1; l < m; l++) {
    // One model sure of a whole object the other misses (the left shoe of a pair on a plant of its
    // colour): a body-sized region, near certain in that model, closed by a strong image edge.
    // On the bench set only true objects pass (the other one-model regions of that size are
    // backdrop the other model rejects, with weaker outlines or lower confidence).
    const sure = areas[l] >= p.sureShare * mainArea && confidence[l] / areas[l] >= p.sureConfidence * 255 && rim[l] / Math.max(1, rimCount[l]) >= p.sureEdge;
    // Body-sized, it is judged like a core of comparable size: wherever it is.
    keep[l] = sure && areas[l] >= p.partThickness * outline[l] ? 1 : 0;
    // A large part near the body that one model is sure of and the other gives nothing: the
    // trophy's plinth and the cherries' stem and leaf on brick (U2-Net-p 0.99 / 0.95; ISNet at the
    // image's aspect 0.005 / 0.05), the leather shoes on the fruit stall (U2-Net-p 0.98; ISNet took
    // the orange). Near the body and that large, the other model's silence is not evidence: on the
    // set the backdrop regions one model took near the body are small (<= 0.14 of the main core)
    // or less certain (<= 0.94). A part lies inside the picture; a region running out of it (a
    // wall behind the product one model took whole) is backdrop. Far from the body the sure-edge
    // rule above still applies.
    const nearSure = !framed[l] && nearest[l] <= partNear && areas[l] >= p.nearSureShare * mainArea && confidence[l] / areas[l] >= p.sureConfidence * 255;
    if (nearSure && areas[l] >= p.partThickness * outline[l]) keep[l] = 1;
    // Model first: 2 marks a blob kept for the primary's sake alone (no rule judged the second model's pixels in it).
    if (!keep[l] && p.primaryFirst && primary && primaryCount[l] >= 0.5 * areas[l] && (nearest[l] <= partNear || areas[l] >= p.minShare * mainArea))
      keep[l] = 2;
  }
  // Model first, in steps: a primary region near a region kept in the previous step is kept too
  // (a seedling's leaves on its stem, which only ISNet sees, above the soil both see).
  for (let step = 0; p.primaryFirst && primary && step < 4; step++) {
    const seed = new Uint8Array(keepAll);
    for (let i = 0; i < labels.length; i++) if (keep[labels[i]!]) seed[i] = 1;
    const d = distanceToSeeds(seed, w, h);
    const near = new Float64Array(m).fill(Infinity);
    for (let i = 0; i < labels.length; i++) {
      const l = labels[i]!;
      if (l && !keep[l] && d[i]! < near[l]!) near[l] = d[i]!;
    }
    let added = false;
    for (let l = 1; l < m; l++) {
      if (keep[l] || primaryCount[l]! < 0.5 * areas[l]! || near[l]! > partNear) continue;
      keep[l] = 2;
      added = true;
    }
    if (!added) break;
  }
  for (let i = 0; i < labels.length; i++) {
    if (keep[labels[i]]) {
      keepAll[i] = 1;
      // Model first: the union draws the edge only where a rule kept what the second model found and the primary did not.
      if (!(p.primaryFirst && primary) || (keep[labels[i]!] === 1 && primary[i]! < 128)) keepHi[i] = 1;
    }
  }
}

/**
 * Connected regions of mask >= 128 (at analysis resolution, scaled back: the count is for the
 * user, not for pixel work) with their areas and boxes in image pixels, largest first; regions
 * below `speckShare` of the image are left out.
 */
export function partsOf(mask: Uint8Array, w: number, h: number, speckShare = DEFAULT_FUSION.speckShare): MaskPart[] {
  const { f, lw, lh } = analysisGrid(w, h, FUSION_SIDE);
  const { labels, areas } = labelRegions(nearestDown(mask, w, h, f), lw, lh);
  const box = areas.map(() => ({ x0: lw, y0: lh, x1: -1, y1: -1 }));
  for (let y = 0, i = 0; y < lh; y++) {
    for (let x = 0; x < lw; x++, i++) {
      const l = labels[i];
      if (!l) continue;
      const b = box[l];
      if (x < b.x0) b.x0 = x;
      if (x > b.x1) b.x1 = x;
      if (y < b.y0) b.y0 = y;
      if (y > b.y1) b.y1 = y;
    }
  }
  const parts: MaskPart[] = [];
  for (let l = 1; l < areas.length; l++) {
    if (areas[l] < speckShare * lw * lh) continue;
    const b = box[l];
    const left = b.x0 * f,
      top = b.y0 * f;
    parts.push({ area: Math.min(w * h, areas[l] * f * f), left, top, width: Math.min(w, (b.x1 + 1) * f) - left, height: Math.min(h, (b.y1 + 1) * f) - top });
  }
  return parts.sort((a, b) => b.area - a.area);
}

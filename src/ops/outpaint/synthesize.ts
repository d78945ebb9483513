import { throwIfAborted } from '../../errors.js';
import type { ProgressEvent } from '../define.js';
import { emptyField, randomInit, refreshDistances, renderBest, sweep, upsampleField, usageOf, vote, type Field, type SearchParams } from './patchmatch.js';
import { mulberry32, type Rng } from '../../media/random.js';
import { baseLevel, buildPyramid, type Level, type Margins } from './pyramid.js';
import { blendStraight, STRAIGHT_BLEND } from './straight.js';
import { distinctMap } from './distinct.js';
import { detailMaps } from './detail.js';
import { gradientRender } from './gradient.js';
import { levelSubject, subjectMask } from './salient.js';
import { blendSeams, SEAM_BLEND, type SeamBlend } from './seam.js';

export interface SynthOptions {
  /**
   * 0 = sources near the border, straight structure carried on; 1 = sources from anywhere, no
   * straight blend, noisier start. Every value renders full detail: never a blur.
   */
  creativity: number;
  seed: number;
  signal?: AbortSignal;
  onProgress?: (e: ProgressEvent) => void;
  /** Overrides the reuse penalty (bench and tests; 0 = off). */
  reuse?: number;
  /** Overrides the distinctness cost (bench and tests; 0 = off). */
  distinct?: number;
  /** Overrides the salient-subject cost (bench and tests; 0 = off, and the model is not run). */
  salient?: number;
  /** Overrides the detail cost (bench and tests; 0 = off). */
  detail?: number;
  /** Overrides the coarsest scale's vote falloff, as a factor per pixel of depth (bench and tests; 2 = as the finer scales). */
  coarseFalloff?: number;
  /** Turns the gradient-domain render of the finest scale off (bench and tests). */
  gradient?: boolean;
  /** Overrides the finest scale's final rendering (bench and tests): 'best' patch per pixel or the 'mean' vote. */
  render?: 'best' | 'mean';
  /** Diagnostics (bench/outpaint-stages.mjs): the canvas after each stage, named. Not for production use. */
  onStage?: (stage: string, L: Level) => void;
}

export interface SynthResult {
  /** RGB canvas of (width + left + right) x (height + top + bottom); original pixels exact. */
  data: Uint8Array;
  width: number;
  height: number;
  levels: number;
}

/** 7x7 patches: small enough for fine texture, large enough to carry edges. */
const R = 3;
/**
 * Reuse penalty (patchmatch.ts `Usage`): each extra use of a source pixel costs as much as an
 * RMS error of ~6 grey levels over the patch. Measured on the bench (--quick, 32 bands): 0 ->
 * 40 -> 100 moves the mean detail ratio 0.84 -> 0.92 -> 0.95 and band SSIM 0.438 -> 0.422 ->
 * 0.416; by eye 40 breaks up the repeated pot and head copies about as well as 100.
 */
const REUSE = 40;
/**
 * Cost of copying a distinctive source (distinct.ts), as a multiple of its uniqueness (distance
 * to its nearest other patch beyond twice the median), at full strength, which is reached
 * DISTINCT_DEPTH x the band's depth out. Measured in docs/ops/outpaint.md.
 */
const DISTINCT = 3;
const DISTINCT_DEPTH = 0.5;
/**
 * Cost of copying the salient subject (salient.ts), in squared 8-bit units per pixel and channel
 * of the patch at full strength (6000 ~ an RMS error of 77 grey levels: background wins unless
 * nothing in reach resembles the target at all). Full strength is reached SALIENT_DEPTH x the
 * band's depth out at creativity 0, the whole depth at creativity 1 (a subject may run further).
 * Full bench (104 bands, docs/ops/outpaint.md), off / 1500 / 6000: detail in range 63 / 54 / 52,
 * SSIM above edge and mirror 38 / 40 / 42. By eye 1500 still let the suit and a second neck ring
 * grow into the deep bands of the 2048x2048 speed case and kept the butterfly's black mass above
 * it; 6000 replaced both with flag, wall and leaves.
 */
const SALIENT = 6000;
const SALIENT_DEPTH = 0.2;
/**
 * Detail cost (detail.ts): a source pays DETAIL x (its mean gradient magnitude - the one expected
 * for the target)^2 per pixel and channel of the patch. Round 8, bench on 5 photos (40 bands):
 * detail in 0.75-1.33 19 -> 23 bands at 2, with the gradient render 22 (docs/ops/outpaint.md).
 */
const DETAIL = 2;
/**
 * The coarsest scale's vote weights fall by this factor per pixel of a patch's depth (Wexler et
 * al.'s gamma), instead of the finer scales' 2 (patchmatch.ts `BOUNDARY_FALLOFF`). Why: each EM
 * iteration's vote lets the patches nearest the seam outweigh the others over every pixel they
 * cover, so at the coarsest scale, where the layout is decided, whatever touches the seam is
 * dragged a few pixels further out per iteration, and the next search fills the dragged colour
 * with whatever non-subject source looks like it (Grace Hopper, top 40%: a pillar of gold fringe
 * and white flag stripe above her face, as tall as the band; plant, top 40%: the blue stake up the
 * whole band). At 1.3 both stop about half-way. At every scale (round 9) the seam got worse
 * elsewhere (a fringe-coloured blob beside Grace Hopper, left + right); at the coarsest scale only,
 * the full bench moved by 1-2 bands (docs/ops/outpaint.md, round 9). At 1.0 (no depth weighting)
 * the fills got blockier (SSIM wins 39 -> 31).
 */
const COARSE_FALLOFF = 1.3;
/**
 * Conjugate-gradient steps of the gradient-domain render (gradient.ts) at the finest scale that
 * runs EM; enough for a correction to spread over the bench's deepest bands (~200 px at that scale).
 */
const GRADIENT_ITERATIONS = 150;
/** The distinctness map is computed on the coarsest level with at least this many known pixels a side. */
const DISTINCT_MIN_KNOWN = 48;
/** Coarsest level keeps at least this many known pixels a side, so it still shows the layout. */
const MIN_KNOWN = 32;
/** Levels with more canvas pixels than this are only refined locally (one short EM step). */
const HEAVY_PIXELS = 1_000_000;
/**
 * Levels with more canvas pixels than this get no search at all: the field from the level
 * below, upsampled, already places every source patch to the pixel (its offsets carry the full
 * resolution detail), and one vote renders it. A search here would cost ~5 patch distances per
 * band pixel for a 1-px correction (2048x2048 canvas: ~70% of the time).
 */
const VOTE_ONLY_PIXELS = 2_500_000;

/**
 * The finest scale's final rendering (round 7): each band pixel copies the pixel its best
 * overlapping patch gives it (`renderBest` in patchmatch.ts) instead of the weighted mean of the
 * 49 patches over it, which averages patches whose sources disagree and smooths the band. Quick
 * bench (4 photos, 32 bands): mean detail ratio 0.86 -> 0.94, Grace Hopper right 25% 0.65 ->
 * 0.85 (the photo's grain kept in the sky and suit). Measured with bench/outpaint-stages.mjs,
 * the rest of the detail deficit is not lost by voting: the band's detail ratio at each scale
 * is already set at the coarsest scale (what is copied) and EM iterations raise it, they do not
 * lower it.
 */
const RENDER: 'best' | 'mean' = 'best';

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Starting guess at the coarsest scale: every band pixel takes the mean of the original pixels
 * within a square around its nearest original pixel, the square's radius being the pixel's
 * distance from the original. Next to the border that is edge replicate (colours and large
 * structures running across the border continue); further out it is an ever wider local
 * average, the expected colour of the region and nothing more. Plain edge replicate, used
 * before, planted a column of whatever touched the border all the way out, which EM at the
 * coarsest scale then kept as an object (astronaut, top 40%: a black pillar over the neck
 * ring); a mirrored start planted reflected copies of objects. Creativity adds low-frequency
 * noise (one coarse pixel spans many output pixels) so different seeds take different paths.
 */
function initialGuess(L: Level, creativity: number, rng: Rng): void {
  const amp = creativity * 60;
  const kw = L.kx1 - L.kx0;
  const kh = L.ky1 - L.ky0;
  // Integral image of the original part, per channel.
  const S = new Float64Array((kw + 1) * (kh + 1) * 3);
  const at = (x: number, y: number) => (y * (kw + 1) + x) * 3;
  for (let y = 0; y < kh; y++) {
    for (let x = 0; x < kw; x++) {
      const si = ((y + L.ky0) * L.w + x + L.kx0) * 3;
      for (let c = 0; c < 3; c++) S[at(x + 1, y + 1) + c] = L.img[si + c]! + S[at(x, y + 1) + c]! + S[at(x + 1, y) + c]! - S[at(x, y) + c]!;
    }
  }
  for (let y = 0; y < L.h; y++) {
    const inRows = y >= L.ky0 && y < L.ky1;
    const ny = Math.min(L.ky1 - 1, Math.max(L.ky0, y)) - L.ky0;
    const dy = Math.max(L.ky0 - y, y - L.ky1 + 1, 0);
    for (let x = 0; x < L.w; x++) {
      if (inRows && x >= L.kx0 && x < L.kx1) continue;
      const nx = Math.min(L.kx1 - 1, Math.max(L.kx0, x)) - L.kx0;
      const d = Math.max(dy, L.kx0 - x, x - L.kx1 + 1) - 1;
      const x0 = Math.max(0, nx - d),
        x1 = Math.min(kw, nx + d + 1);
      const y0 = Math.max(0, ny - d),
        y1 = Math.min(kh, ny + d + 1);
      const inv = 1 / ((x1 - x0) * (y1 - y0));
      const di = (y * L.w + x) * 3;
      const n = amp ? ((rng() / 4294967296) * 2 - 1) * amp : 0;
      for (let c = 0; c < 3; c++) {
        const v = (S[at(x1, y1) + c]! - S[at(x0, y1) + c]! - S[at(x1, y0) + c]! + S[at(x0, y0) + c]!) * inv;
        L.img[di + c] = Math.min(255, Math.max(0, v + n));
      }
    }
  }
}

/**
 * How far (Chebyshev, from the target's nearest original pixel) sources may lie. Creativity 0
 * keeps sources within a fifth of the original's short side or half the band's depth, whichever
 * is larger: the most faithful continuation of what is next to the border, and fewer copies of
 * salient objects from across the picture. The band's depth counts because a deep band with a
 * narrow window has far fewer sources than targets and every source is stamped several times
 * (window = 0.2 x short side, plant top 40%: a row of pots); at the full depth, the subject
 * itself comes within reach and is copied whole (squirrel and astronaut, left + right 25%: a
 * second squirrel, a second suit). Half the depth was the best compromise by eye on the quick
 * bench; the scores barely move (mean detail 0.90 -> 0.91, band SSIM 0.423 -> 0.424).
 * With a salient subject (salient.ts) the window reaches the full depth: the subject is then
 * priced out of the outer band, and the wider window is what puts background within reach of
 * targets above a wide subject (astronaut, top 40%: with half the depth every source in reach was
 * suit or neck ring, all equally priced, and the ring stayed stacked three times).
 * Creativity 1 opens the whole picture.
 */
function searchWindow(L: Level, creativity: number, subject: boolean): number {
  const depth = Math.max(L.kx0, L.ky0, L.w - L.kx1, L.h - L.ky1);
  const near = Math.max(0.2 * Math.min(L.kx1 - L.kx0, L.ky1 - L.ky0), (subject ? 1 : 0.5) * depth);
  return Math.max(2 * R + 2, Math.round(near + (Math.max(L.w, L.h) - near) * creativity));
}

/**
 * The distinctness map of level `C` on level `L`, `k` octaves apart (negative = finer): nearest
 * sample, by canvas coordinates.
 */
function levelMap(D: Float32Array, C: Level, L: Level, k: number): Float32Array {
  if (L === C) return D;
  const out = new Float32Array(L.w * L.h);
  const f = 2 ** k; // fine -> coarse factor is 2^-k for k < 0
  for (let y = 0; y < L.h; y++) {
    const cy = Math.min(C.h - 1, Math.floor(y * f));
    for (let x = 0; x < L.w; x++) out[y * L.w + x] = D[cy * C.w + Math.min(C.w - 1, Math.floor(x * f))]!;
  }
  return out;
}

interface Plan {
  em: number;
  sweeps: number;
  maxRadius: number;
}

function planFor(L: Level, depth: number, coarsest: boolean): Plan {
  if (coarsest) return { em: 10, sweeps: 2, maxRadius: Math.max(L.w, L.h) };
  if (L.w * L.h > VOTE_ONLY_PIXELS) return { em: 0, sweeps: 0, maxRadius: 0 };
  if (L.w * L.h > HEAVY_PIXELS) return { em: 1, sweeps: 2, maxRadius: 4 };
  return { em: Math.max(2, 6 - depth), sweeps: 2, maxRadius: 8 };
}

/**
 * Coarse-to-fine PatchMatch completion of the band around an RGB image. Each level runs EM:
 * nearest-neighbour search (propagation + random search) against the current estimate, then
 * voting. The field found at one level seeds the next, so layout decided coarsely is kept.
 */
export async function synthesize(rgb: Uint8Array, width: number, height: number, m: Margins, o: SynthOptions): Promise<SynthResult> {
  const { level, levels } = await patchSynthesis(rgb, width, height, m, o);
  return { data: finish(level, rgb, width, height, m, SEAM_BLEND, 1 - o.creativity), width: level.w, height: level.h, levels };
}

/**
 * The full-resolution float canvas after PatchMatch completion, before any post-processing,
 * with the finest level's nearest-neighbour field (its patch errors say how well the border is
 * explained by the rest of the picture).
 */
export async function patchSynthesis(
  rgb: Uint8Array,
  width: number,
  height: number,
  m: Margins,
  o: SynthOptions,
): Promise<{ level: Level; levels: number; field: Field }> {
  const rng = mulberry32(o.seed);
  const levels = buildPyramid(baseLevel(rgb, width, height, m), MIN_KNOWN);
  const n = levels.length;
  const plans = levels.map((L, i) => planFor(L, n - 1 - i, i === n - 1));
  // Work per level ~ targets x sweeps x EM; used only to make progress fractions honest.
  const work = levels.map((L, i) => (L.w * L.h - (L.kx1 - L.kx0) * (L.ky1 - L.ky0)) * Math.max(1, plans[i]!.em * plans[i]!.sweeps) + 1);
  const totalWork = work.reduce((a, b) => a + b, 0);
  let doneWork = 0;

  // Distinctness of the original's patches, found once at a coarse scale (distinct.ts).
  const distinctCost = o.distinct ?? DISTINCT;
  let dIndex = n - 1;
  while (dIndex > 0 && Math.min(levels[dIndex]!.kx1 - levels[dIndex]!.kx0, levels[dIndex]!.ky1 - levels[dIndex]!.ky0) < DISTINCT_MIN_KNOWN) dIndex--;
  const dLevel = levels[dIndex]!;
  const dMap = distinctCost > 0 ? distinctMap(dLevel, R, mulberry32(o.seed ^ 0x5bd1e995)) : undefined;

  // The salient subject, found once on the original by U2-Net-p (salient.ts); absent for
  // pictures without a confident compact subject (textures), which then fill as before.
  const salientCost = o.salient ?? SALIENT;
  const found = salientCost > 0 ? await subjectMask(rgb, width, height, o.signal) : undefined;
  // Only if the cost applies on some side that has a band (salient.ts `sideWeights`).
  const subject = found && [m.left, m.top, m.right, m.bottom].some((b, k) => b > 0 && found.sides[k]! > 0) ? found : undefined;

  let field: Field | undefined;
  for (let i = n - 1; i >= 0; i--) {
    const L = levels[i]!;
    const plan = plans[i]!;
    const scale = n - i;
    const p: SearchParams = {
      r: R,
      window: searchWindow(L, o.creativity, subject !== undefined),
      // Creativity lets the finer scales search the whole picture instead of only refining
      // around the coarse layout, so patches may come from further away.
      maxRadius: Math.max(plan.maxRadius, Math.round(o.creativity * Math.max(L.w, L.h))),
      reuse: o.reuse ?? REUSE,
    };
    if (dMap && plan.em > 0) {
      const depth = Math.max(L.kx0, L.ky0, L.w - L.kx1, L.h - L.ky1);
      p.distinct = { map: levelMap(dMap, dLevel, L, i - dIndex), cost: distinctCost, depth: Math.max(2 * R, DISTINCT_DEPTH * depth) };
    }
    if (subject && plan.em > 0) {
      const depth = Math.max(L.kx0, L.ky0, L.w - L.kx1, L.h - L.ky1);
      const reach = SALIENT_DEPTH + (1 - SALIENT_DEPTH) * o.creativity;
      p.salient = { map: levelSubject(subject, L, R), cost: salientCost, depth: Math.max(2 * R, reach * depth), sides: subject.sides };
    }
    const detailCost = o.detail ?? DETAIL;
    if (detailCost > 0 && plan.em > 0) p.detail = { ...detailMaps(L, R), cost: detailCost };
    if (!field) {
      field = emptyField(L, R);
      randomInit(L, field, p, rng);
      initialGuess(L, o.creativity, rng);
    } else {
      field = upsampleField(levels[i + 1]!, field, L, R);
      // Where no search follows, a 3x3 vote renders the upsampled field: the 7x7 one averages
      // neighbours whose sources differ by the odd pixel of the upsampling and visibly softens
      // the whole band (2048x2048 canvas).
      vote(L, field, plan.em === 0 ? 1 : R, true);
      levels[i + 1] = undefined as unknown as Level; // free the coarse canvas early
      o.onStage?.(`scale ${scale} upsampled`, L);
    }
    if (plan.em === 0) {
      doneWork += work[i]!;
      o.onProgress?.({ fraction: Math.min(0.99, doneWork / totalWork), stage: `scale ${scale}/${n} iteration 1/1`, done: 1, total: 1, unit: 'iterations' });
      await yieldToLoop();
    }
    for (let e = 0; e < plan.em; e++) {
      throwIfAborted(o.signal);
      refreshDistances(L, field, R);
      const usage = p.reuse > 0 ? usageOf(L, field) : undefined;
      for (let s = 0; s < plan.sweeps; s++) sweep(L, field, p, rng, s % 2 === 1, usage);
      if (i === 0 && e === plan.em - 1 && (o.render ?? RENDER) === 'best') {
        // Best patch per pixel, then its block edges dissolved in the gradient domain (gradient.ts).
        const from = renderBest(L, field, R);
        if (o.gradient ?? true) gradientRender(L, from, GRADIENT_ITERATIONS);
      } else vote(L, field, R, false, i === n - 1 ? Math.log(o.coarseFalloff ?? COARSE_FALLOFF) : undefined);
      o.onStage?.(`scale ${scale} em ${e + 1}`, L);
      doneWork += work[i]! / plan.em;
      o.onProgress?.({
        fraction: Math.min(0.99, doneWork / totalWork),
        stage: `scale ${scale}/${n} iteration ${e + 1}/${plan.em}`,
        done: e + 1,
        total: plan.em,
        unit: 'iterations',
      });
      await yieldToLoop();
    }
  }
  throwIfAborted(o.signal);
  return { level: levels[0]!, levels: n, field: field! };
}

/**
 * Post-processing of the synthesised canvas (`L` is modified), then the original pasted back:
 * the blend toward the straight continuation where the picture runs straight across the border
 * (`straight` is its strength, 1 - creativity), and the seam blend last so that the band meets
 * the original.
 */
export function finish(L: Level, rgb: Uint8Array, width: number, height: number, m: Margins, seam: SeamBlend | null = SEAM_BLEND, straight = 1): Uint8Array {
  blendStraight(L, STRAIGHT_BLEND, straight);
  if (seam) blendSeams(L, seam);
  const out = new Uint8Array(L.w * L.h * 3);
  // +0.5 then truncation rounds; the clamp guards against blends overshooting 0..255.
  for (let i = 0; i < out.length; i++) {
    const v = L.img[i]! + 0.5;
    out[i] = v < 0 ? 0 : v > 255 ? 255 : v;
  }
  // Paste the original back byte for byte: synthesis never alters what was there.
  for (let y = 0; y < height; y++) {
    out.set(rgb.subarray(y * width * 3, (y + 1) * width * 3), ((y + m.top) * L.w + m.left) * 3);
  }
  return out;
}

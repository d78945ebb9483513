import { BlockMotion, warpMatte, type MotionField } from './motion.js';

/**
 * Temporal stabilisation of per-frame mattes.
 *
 * A segmentation model looks at each frame alone, so where nothing moves its matte still
 * wobbles by a few levels (and sometimes by a lot on thin or low-contrast edges): that is the
 * flicker people see. The cure must not touch moving regions, or the matte would lag behind
 * the subject (smearing). So the blend weight is chosen per region from how much the *pixels*
 * changed since the previous frame:
 *
 *   matte_t = a * raw_t + (1 - a) * matte_{t-1},  a = aMin where the pixels are static,
 *                                                  a = 1 where they moved (dilated one cell)
 *
 * Motion is measured on a grid of cells (mean absolute luma difference per cell, which averages
 * out codec noise) and the per-cell weight is interpolated bilinearly so no cell seams appear.
 * A scene cut (most of the frame changed) resets the state. Frames nearly identical to the
 * last frame that was segmented reuse the matte without inference.
 *
 * With a keyframe cadence above 1 (default 2), frames between keyframes are not segmented:
 * `analyse` estimates block motion (motion.ts) and, when it explains the frame, marks it
 * `propagate`; `update(null, analysis)` then warps the previous output along that motion and
 * blends it like a model matte. Bench (Megamind 480p): IoU on moving regions vs per-frame
 * mattes 0.968 at cadence 2, 0.944 at 3; see docs/ops/video-remove-background.md.
 *
 * `analyse` decides everything about a frame (cut, reuse, blend weights) and returns it, so
 * the pipeline can analyse several frames ahead while their mattes are still being inferred,
 * then fold each matte in with `update(raw, analysis)` in frame order.
 */

export interface StabiliserOptions {
  /** Turn blending off (the matte is the raw per-frame matte); analysis still runs. */
  enabled?: boolean;
  /** Weight of the new matte where the picture is static (0..1). */
  staticWeight?: number;
  /** Mean abs luma difference per cell (0..255) below which a cell is static. */
  motionLow?: number;
  /** ...and above which it is moving (weight 1). */
  motionHigh?: number;
  /** Mean abs luma difference over the frame above which the frame is a new scene. */
  sceneCut?: number;
  /** Largest per-cell difference to the last segmented frame for which its matte is reused. */
  reuseBelow?: number;
  /** Never reuse a matte for more than this many frames in a row. */
  maxReuse?: number;
  /**
   * Half cadence where motion is small: a frame whose every cell is within this of the last
   * segmented frame reuses its matte, if the frame before it was segmented (so at most every
   * other frame is skipped this way). 0 turns it off.
   */
  skipBelow?: number;
  /**
   * Keyframe cadence: segment every Nth frame and carry the matte along the block motion on
   * the frames in between (1 = segment every frame). Scene cuts, large motion and motion that
   * block matching cannot explain always get a keyframe.
   */
  cadence?: number;
  /** Mean abs luma difference to the previous frame above which the frame is always segmented. */
  propagateMotion?: number;
  /** Motion-compensated residual (mean abs luma, 1/4 grid) above which the frame is segmented. */
  propagateResidual?: number;
  /** Largest per-block residual above which the frame is segmented (one block the motion cannot explain). */
  propagateBlockResidual?: number;
  /** Fraction of blocks at the search limit above which the frame is segmented. */
  propagateClipped?: number;
}

export interface FrameAnalysis {
  sceneCut: boolean;
  /** True when the previous matte can stand for this frame (no inference needed). */
  reuse: boolean;
  /** Mean abs luma difference to the previous frame (0..255). */
  meanMotion: number;
  /** Fraction of cells that moved. */
  movingFraction: number;
  /** Per-cell blend weight of this frame's new matte (cols x rows). */
  weights: Float32Array;
  /** True when this frame's matte is the previous matte warped along `field` (no inference). */
  propagate: boolean;
  /** Block motion to the previous frame, when it was estimated. */
  field?: MotionField;
}

const DEFAULTS: Required<StabiliserOptions> = {
  enabled: true,
  staticWeight: 0.15,
  motionLow: 2,
  motionHigh: 6,
  sceneCut: 30,
  reuseBelow: 1.2,
  maxReuse: 15,
  skipBelow: 0,
  cadence: 2,
  propagateMotion: 16,
  propagateResidual: 6,
  propagateClipped: 0.1,
  propagateBlockResidual: 24,
};

/** Options the pipeline builds its stabiliser with; the bench overrides them to compare variants. */
export const videoStabiliserDefaults: StabiliserOptions = {};

export class MatteStabiliser {
  readonly width: number;
  readonly height: number;
  readonly cell: number;
  readonly cols: number;
  readonly rows: number;
  private readonly o: Required<StabiliserOptions>;
  /** Keyframe cadence in force (1 = every frame segmented). */
  readonly cadence: number;
  private luma: Uint8Array;
  private prevLuma: Uint8Array;
  private readonly keyLuma: Uint8Array;
  /** Per-cell mean abs difference to the previous frame and to the last segmented frame. */
  readonly motion: Float32Array;
  private readonly keyDiff: Float32Array;
  private readonly state: Float32Array;
  private readonly out: Uint8Array;
  private readonly warped: Uint8Array;
  private readonly blocks: BlockMotion;
  /** Frames since the last segmented one. */
  private sinceKey = 0;
  // Bilinear lookup tables from pixel to cell-centre coordinates, one per axis.
  private readonly x0: Int32Array;
  private readonly x1: Int32Array;
  private readonly fx: Float32Array;
  private readonly y0: Int32Array;
  private readonly y1: Int32Array;
  private readonly fy: Float32Array;
  private hasPrev = false;
  private hasKey = false;
  private hasMatte = false;
  private reused = 0;
  private last: FrameAnalysis | undefined;

  constructor(width: number, height: number, options: StabiliserOptions = {}) {
    this.width = width;
    this.height = height;
    this.o = { ...DEFAULTS, ...options };
    this.cadence = Math.max(1, Math.round(this.o.cadence));
    // ~60 cells on the short side: coarse enough to average codec noise, fine enough that a
    // moving hand does not unfreeze the whole body.
    this.cell = Math.max(4, Math.round(Math.min(width, height) / 60));
    this.cols = Math.ceil(width / this.cell);
    this.rows = Math.ceil(height / this.cell);
    const n = width * height;
    this.luma = new Uint8Array(n);
    this.prevLuma = new Uint8Array(n);
    this.keyLuma = new Uint8Array(n);
    this.motion = new Float32Array(this.cols * this.rows);
    this.keyDiff = new Float32Array(this.cols * this.rows);
    this.state = new Float32Array(n);
    this.out = new Uint8Array(n);
    this.warped = new Uint8Array(n);
    this.blocks = new BlockMotion(width, height);
    [this.x0, this.x1, this.fx] = axisTable(width, this.cell, this.cols);
    [this.y0, this.y1, this.fy] = axisTable(height, this.cell, this.rows);
  }

  /**
   * Measures motion against the previous frame and the last segmented frame, and decides
   * whether this frame needs inference. Call once per frame, in order.
   */
  analyse(rgb: Uint8Array, channels = 3): FrameAnalysis {
    const { width, height, cell, cols } = this;
    const motion = this.motion;
    const keyDiff = this.keyDiff;
    motion.fill(0);
    keyDiff.fill(0);
    const cur = this.luma;
    const prev = this.prevLuma;
    const key = this.keyLuma;
    let total = 0;
    for (let y = 0, i = 0, j = 0; y < height; y++) {
      const rowBase = Math.floor(y / cell) * cols;
      for (let x = 0; x < width; x++, i++, j += channels) {
        const l = (77 * rgb[j]! + 150 * rgb[j + 1]! + 29 * rgb[j + 2]!) >> 8;
        cur[i] = l;
        const c = rowBase + ((x / cell) | 0);
        const d = l > prev[i]! ? l - prev[i]! : prev[i]! - l;
        motion[c] += d;
        total += d;
        keyDiff[c] += l > key[i]! ? l - key[i]! : key[i]! - l;
      }
    }
    let moving = 0;
    let maxKey = 0;
    for (let c = 0; c < motion.length; c++) {
      const area = cellArea(c, cols, cell, width, height);
      motion[c] /= area;
      keyDiff[c] /= area;
      if (motion[c]! > this.o.motionHigh) moving++;
      if (keyDiff[c]! > maxKey) maxKey = keyDiff[c]!;
    }
    const meanMotion = this.hasPrev ? total / (width * height) : 255;
    const sceneCut = !this.hasPrev || meanMotion > this.o.sceneCut;
    const still = maxKey < this.o.reuseBelow && this.reused < this.o.maxReuse;
    const slow = maxKey < this.o.skipBelow && this.reused === 0;
    const reuse = this.hasKey && !sceneCut && (still || slow);
    const o = this.o;
    let propagate = false;
    let field: MotionField | undefined;
    if (this.cadence > 1) {
      this.blocks.push(cur);
      if (!reuse && !sceneCut && this.hasKey && this.sinceKey < this.cadence - 1 && meanMotion <= o.propagateMotion) {
        field = this.blocks.estimate();
        propagate = field.residual <= o.propagateResidual && field.worst <= o.propagateBlockResidual && field.clipped <= o.propagateClipped;
      }
    }
    if (reuse) {
      this.reused++;
      this.sinceKey++;
    } else if (propagate) {
      this.sinceKey++;
    } else {
      this.sinceKey = 0;
      // This frame will be segmented: later frames are compared with it for reuse.
      this.reused = 0;
      this.keyLuma.set(cur);
      this.hasKey = true;
    }
    // Swap buffers: the current luma becomes the previous one for the next frame.
    this.luma = prev;
    this.prevLuma = cur;
    this.hasPrev = true;
    const analysis: FrameAnalysis = { sceneCut, reuse, propagate, field, meanMotion, movingFraction: moving / motion.length, weights: this.computeWeights() };
    this.last = analysis;
    return analysis;
  }

  /**
   * Folds the frame's raw matte into the running matte, or (raw = null) reuses the previous
   * matte for a frame `analyse` found near-identical. `analysis` is what `analyse` returned for
   * this frame (default: the latest). Returns the matte to composite with; the array is reused
   * by the next call.
   */
  update(raw: Uint8Array | null, analysis: FrameAnalysis | undefined = this.last): Uint8Array {
    const n = this.width * this.height;
    if (raw === null) {
      if (!this.hasMatte) throw new Error('MatteStabiliser.update(null) before any matte');
      if (!analysis?.propagate || !analysis.field) return this.out;
      // The previous output carried along the motion stands in for this frame's raw matte, and
      // is re-blended like one: static cells keep the running matte, moving cells take it.
      raw = warpMatte(this.out, this.width, this.height, analysis.field, this.warped);
    }
    if (!analysis) throw new Error('MatteStabiliser.update before analyse');
    const state = this.state;
    const out = this.out;
    if (!this.o.enabled || analysis.sceneCut || !this.hasMatte) {
      for (let i = 0; i < n; i++) state[i] = raw[i]!;
      out.set(raw);
      this.hasMatte = true;
      return out;
    }
    const weight = analysis.weights;
    const { width, height, cols, x0, x1, fx, y0, y1, fy } = this;
    for (let y = 0, i = 0; y < height; y++) {
      const r0 = y0[y]! * cols;
      const r1 = y1[y]! * cols;
      const wy = fy[y]!;
      for (let x = 0; x < width; x++, i++) {
        const a0 = weight[r0 + x0[x]!]!;
        const a1 = weight[r0 + x1[x]!]!;
        const b0 = weight[r1 + x0[x]!]!;
        const b1 = weight[r1 + x1[x]!]!;
        const wx = fx[x]!;
        const top = a0 + (a1 - a0) * wx;
        const a = top + (b0 + (b1 - b0) * wx - top) * wy;
        const v = state[i]! + a * (raw[i]! - state[i]!);
        state[i] = v;
        out[i] = v + 0.5;
      }
    }
    return out;
  }

  /** Per-cell blend weight: static -> staticWeight, moving -> 1, dilated by one cell. */
  private computeWeights(): Float32Array {
    const { cols, rows, motion } = this;
    const weight = new Float32Array(cols * rows);
    const { motionLow, motionHigh, staticWeight } = this.o;
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < cols; c++) {
        let m = 0;
        // The matte edge of a moving subject lies partly in the cells next to the pixels
        // that changed, so the largest motion of the 3x3 neighbourhood decides.
        for (let dr = -1; dr <= 1; dr++) {
          const rr = r + dr;
          if (rr < 0 || rr >= rows) continue;
          for (let dc = -1; dc <= 1; dc++) {
            const cc = c + dc;
            if (cc < 0 || cc >= cols) continue;
            const v = motion[rr * cols + cc]!;
            if (v > m) m = v;
          }
        }
        const t = Math.min(1, Math.max(0, (m - motionLow) / (motionHigh - motionLow)));
        weight[r * cols + c] = staticWeight + (1 - staticWeight) * t;
      }
    }
    return weight;
  }
}

function cellArea(c: number, cols: number, cell: number, width: number, height: number): number {
  const cx = c % cols;
  const cy = (c / cols) | 0;
  return Math.min(cell, width - cx * cell) * Math.min(cell, height - cy * cell);
}

function axisTable(size: number, cell: number, cells: number): [Int32Array, Int32Array, Float32Array] {
  const i0 = new Int32Array(size);
  const i1 = new Int32Array(size);
  const f = new Float32Array(size);
  for (let p = 0; p < size; p++) {
    const pos = Math.min(cells - 1, Math.max(0, (p + 0.5) / cell - 0.5));
    const lo = Math.floor(pos);
    i0[p] = lo;
    i1[p] = Math.min(cells - 1, lo + 1);
    f[p] = pos - lo;
  }
  return [i0, i1, f];
}

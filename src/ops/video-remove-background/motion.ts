/**
 * Cheap motion for matte propagation: block matching on a 1/4-resolution luma grid, and a
 * backward warp of the previous matte along the block motion field.
 *
 * Frames between keyframes get no inference: their matte is the previous frame's matte carried
 * along the motion. Block matching is enough for that because the stabiliser re-blends the
 * result and a keyframe follows within a frame or two; what matters is that it is cheap (a few
 * ms per 480p frame) and that it says when it cannot explain the frame (large residual, vectors
 * at the search limit), so the caller segments that frame instead.
 */

/** Downscale factor of the luma grid the blocks are matched on. */
const SCALE = 4;
/** Block side on the grid (= 32 px at full resolution). */
const BLOCK = 8;
/** Search range on the grid (= +-12 px per frame at full resolution; more is a keyframe). */
const RANGE = 3;
/** A non-zero vector must beat the zero vector's SAD by this much per grid pixel (flat areas stay put). */
const ZERO_BIAS = 0.5;
/** Full-resolution refinement around the grid vector, in px (covers half a grid step and some). */
const FINE = 2;

export interface MotionField {
  /** Vectors across and down (one per grid pixel after refinement). */
  cols: number;
  rows: number;
  /** Pixels per vector along each axis at full resolution. */
  block: number;
  /** Backward vectors in full-resolution pixels: the pixel at p in this frame was at p + v in the previous one. */
  vx: Float32Array;
  vy: Float32Array;
  /** Mean abs luma residual per grid pixel after compensation (0..255): what translation cannot explain. */
  residual: number;
  /** Largest per-block mean residual: one badly explained block (a subject jumping) is enough to refuse. */
  worst: number;
  /** Fraction of blocks whose best vector sat on the search limit (motion possibly larger than the range). */
  clipped: number;
}

export class BlockMotion {
  readonly gw: number;
  readonly gh: number;
  readonly cols: number;
  readonly rows: number;
  private cur: Uint8Array;
  private prev: Uint8Array;
  private fullCur: Uint8Array;
  private fullPrev: Uint8Array;
  private readonly sum: Uint32Array;
  private pushed = 0;

  constructor(
    readonly width: number,
    readonly height: number,
  ) {
    this.gw = Math.max(1, Math.floor(width / SCALE));
    this.gh = Math.max(1, Math.floor(height / SCALE));
    this.cols = Math.ceil(this.gw / BLOCK);
    this.rows = Math.ceil(this.gh / BLOCK);
    this.cur = new Uint8Array(this.gw * this.gh);
    this.prev = new Uint8Array(this.gw * this.gh);
    this.sum = new Uint32Array(this.gw * this.gh);
    this.fullCur = new Uint8Array(width * height);
    this.fullPrev = this.fullCur;
  }

  /**
   * Feeds the next frame's full-resolution luma (one pass, box-averaged to the grid). The array
   * is kept by reference, not copied: the caller must leave the last two pushed arrays intact
   * until the next push (the stabiliser's double-buffered luma does).
   */
  push(luma: Uint8Array): void {
    const { width, gw, gh, sum } = this;
    const t = this.prev;
    this.prev = this.cur;
    this.cur = t;
    this.pushed++;
    this.fullPrev = this.fullCur;
    this.fullCur = luma;
    sum.fill(0);
    for (let gy = 0; gy < gh; gy++) {
      const row = gy * gw;
      for (let y = gy * SCALE, yEnd = y + SCALE; y < yEnd; y++) {
        for (let gx = 0, i = y * width; gx < gw; gx++, i += SCALE) sum[row + gx] += luma[i]! + luma[i + 1]! + luma[i + 2]! + luma[i + 3]!;
      }
    }
    const cur = this.cur;
    for (let i = 0; i < cur.length; i++) cur[i] = (sum[i]! + 8) >> 4;
  }

  /** Block motion of the latest frame against the one before it (zero field before two frames). */
  estimate(): MotionField {
    const { gw, gh, cols, rows, cur, prev } = this;
    const vx = new Float32Array(cols * rows);
    const vy = new Float32Array(cols * rows);
    let residual = 0;
    let clipped = 0;
    let worst = 0;
    for (let by = 0; by < rows; by++) {
      const y0 = by * BLOCK;
      const y1 = Math.min(gh, y0 + BLOCK);
      for (let bx = 0; bx < cols; bx++) {
        const x0 = bx * BLOCK;
        const x1 = Math.min(gw, x0 + BLOCK);
        const n = (y1 - y0) * (x1 - x0);
        const bias = ZERO_BIAS * n;
        let best = Infinity;
        let s0 = 0;
        let bdx = 0;
        let bdy = 0;
        // Same candidate order and strict comparisons as a full search, so the early exit
        // (a candidate stops once its partial SAD cannot win) changes no result.
        for (let dy = -RANGE; dy <= RANGE; dy++) {
          for (let dx = -RANGE; dx <= RANGE; dx++) {
            const zero = dx === 0 && dy === 0;
            const s = blockSad(cur, prev, gw, gh, x0, x1, y0, y1, dx, dy, 1, zero ? best + bias : best);
            const biased = zero ? s - bias : s;
            if (biased < best) {
              best = biased;
              s0 = s;
              bdx = dx;
              bdy = dy;
            }
          }
        }
        residual += s0;
        if (s0 / n > worst) worst = s0 / n;
        if (Math.abs(bdx) === RANGE || Math.abs(bdy) === RANGE) clipped++;
        // Grid steps are 4 px: the vector is refined to the pixel at full resolution.
        const [fx, fy] = this.fine(bx, by, bdx * SCALE, bdy * SCALE);
        vx[by * cols + bx] = fx;
        vy[by * cols + bx] = fy;
      }
    }
    const dense = this.refine(vx, vy);
    return {
      cols: gw,
      rows: gh,
      block: SCALE,
      vx: dense.vx,
      vy: dense.vy,
      residual: this.pushed >= 2 ? residual / (gw * gh) : Infinity,
      worst: this.pushed >= 2 ? worst : Infinity,
      clipped: clipped / (cols * rows),
    };
  }

  /** Best integer vector within +-FINE px of (cx, cy) for block (bx, by), on every 2nd full-res row and column. */
  private fine(bx: number, by: number, cx: number, cy: number): [number, number] {
    const { width, height, fullCur: cur, fullPrev: prev } = this;
    const side = BLOCK * SCALE;
    const x0 = bx * side;
    const y0 = by * side;
    const x1 = Math.min(width, x0 + side);
    const y1 = Math.min(height, y0 + side);
    let best = Infinity;
    let rx = cx;
    let ry = cy;
    for (let dy = cy - FINE; dy <= cy + FINE; dy++) {
      for (let dx = cx - FINE; dx <= cx + FINE; dx++) {
        const s = blockSad(cur, prev, width, height, x0, x1, y0, y1, dx, dy, 2, best);
        if (s < best || (s === best && dx === 0 && dy === 0)) {
          best = s;
          rx = dx;
          ry = dy;
        }
      }
    }
    return [rx, ry];
  }

  /**
   * Block vectors to one vector per grid pixel: each grid pixel takes whichever vector of its
   * own and the 8 neighbouring blocks matches its 3x3 neighbourhood best. A block straddling a
   * moving subject and the static background has one vector for both; this puts the subject's
   * edge back on the subject's vector instead of smearing it over the block.
   */
  private refine(bvx: Float32Array, bvy: Float32Array): { vx: Float32Array; vy: Float32Array } {
    const { gw, gh, cols, rows, cur, prev } = this;
    const vx = new Float32Array(gw * gh);
    const vy = new Float32Array(gw * gh);
    const cand = new Int32Array(9);
    // Per candidate, the abs difference over the block and a 1-pixel border: every pixel of a
    // block has the same candidates, so each shifted sample is computed once instead of once
    // per 3x3 window it falls in (9x fewer bilinear samples; the sums are the same numbers
    // added in the same order as a per-pixel window, so the choice is unchanged).
    const pw = BLOCK + 2;
    const diff = new Float64Array(9 * pw * pw);
    for (let by = 0; by < rows; by++) {
      const y0 = by * BLOCK;
      const y1 = Math.min(gh, y0 + BLOCK);
      for (let bx = 0; bx < cols; bx++) {
        const x0 = bx * BLOCK;
        const x1 = Math.min(gw, x0 + BLOCK);
        const own = by * cols + bx;
        let nc = 0;
        cand[nc++] = own;
        for (let dy = -1; dy <= 1; dy++) {
          const yy = by + dy;
          if (yy < 0 || yy >= rows) continue;
          for (let dx = -1; dx <= 1; dx++) {
            const xx = bx + dx;
            if (!(dx || dy) || xx < 0 || xx >= cols) continue;
            const b = yy * cols + xx;
            // Only vectors that differ from the own block's compete (most blocks agree with all
            // their neighbours, and then there is nothing to choose).
            if (bvx[b] !== bvx[own] || bvy[b] !== bvy[own]) cand[nc++] = b;
          }
        }
        if (nc === 1) {
          const ux = bvx[own]!;
          const uy = bvy[own]!;
          for (let y = y0; y < y1; y++) {
            vx.fill(ux, y * gw + x0, y * gw + x1);
            vy.fill(uy, y * gw + x0, y * gw + x1);
          }
          continue;
        }
        for (let k = 0; k < nc; k++) {
          const b = cand[k]!;
          // Sub-grid vectors sampled bilinearly: rounding them to whole grid steps (4 px)
          // would make the true vector lose to zero right at the edges that matter.
          const ox = bvx[b]! / SCALE;
          const oy = bvy[b]! / SCALE;
          const base = k * pw * pw;
          for (let py = 0; py < y1 - y0 + 2; py++) {
            const cy = Math.min(gh - 1, Math.max(0, y0 - 1 + py));
            let sy = cy + oy;
            sy = sy < 0 ? 0 : sy > gh - 1 ? gh - 1 : sy;
            const iy = sy | 0;
            const fy = sy - iy;
            const r0 = iy * gw;
            const r1 = iy < gh - 1 ? r0 + gw : r0;
            const row = base + py * pw;
            for (let px = 0; px < x1 - x0 + 2; px++) {
              const cx = Math.min(gw - 1, Math.max(0, x0 - 1 + px));
              let sx = cx + ox;
              sx = sx < 0 ? 0 : sx > gw - 1 ? gw - 1 : sx;
              const ix = sx | 0;
              const fx = sx - ix;
              const jx = ix < gw - 1 ? 1 : 0;
              const top = prev[r0 + ix]! + (prev[r0 + ix + jx]! - prev[r0 + ix]!) * fx;
              const bot = prev[r1 + ix]! + (prev[r1 + ix + jx]! - prev[r1 + ix]!) * fx;
              const d = cur[cy * gw + cx]! - (top + (bot - top) * fy);
              diff[row + px] = d < 0 ? -d : d;
            }
          }
        }
        for (let y = y0; y < y1; y++) {
          for (let x = x0; x < x1; x++) {
            // Window centre in the padded block; rows above/below, columns left/right.
            const c = (y - y0 + 1) * pw + (x - x0 + 1);
            let best = Infinity;
            let pick = cand[0]!;
            for (let k = 0; k < nc; k++) {
              const d = k * pw * pw + c;
              let s = 0;
              s += diff[d - pw - 1]!;
              s += diff[d - pw]!;
              s += diff[d - pw + 1]!;
              s += diff[d - 1]!;
              s += diff[d]!;
              s += diff[d + 1]!;
              s += diff[d + pw - 1]!;
              s += diff[d + pw]!;
              s += diff[d + pw + 1]!;
              // Strictly better only: the pixel's own block wins ties.
              if (s < best) {
                best = s;
                pick = cand[k]!;
              }
            }
            vx[y * gw + x] = bvx[pick]!;
            vy[y * gw + x] = bvy[pick]!;
          }
        }
      }
    }
    return { vx, vy };
  }
}

/**
 * Sum of abs differences between the block [x0,x1)x[y0,y1) of `cur` and the same block shifted
 * by (dx, dy) in `prev`, on every `step`-th row and column. Stops after the first row whose
 * running sum exceeds `limit` (the candidate has lost; ties are still computed in full).
 * Blocks whose shifted copy lies inside the image (almost all) take the loop without clamping.
 */
function blockSad(
  cur: Uint8Array,
  prev: Uint8Array,
  w: number,
  h: number,
  x0: number,
  x1: number,
  y0: number,
  y1: number,
  dx: number,
  dy: number,
  step: number,
  limit: number,
): number {
  let s = 0;
  if (x0 + dx >= 0 && x1 + dx <= w && y0 + dy >= 0 && y1 + dy <= h) {
    const off = dy * w + dx;
    for (let y = y0; y < y1; y += step) {
      const end = y * w + x1;
      for (let i = y * w + x0; i < end; i += step) {
        const d = cur[i]! - prev[i + off]!;
        s += d < 0 ? -d : d;
      }
      if (s > limit) return s;
    }
    return s;
  }
  // Clamped rows/columns stand in for pixels outside the image (edge replication).
  for (let y = y0; y < y1; y += step) {
    const py = Math.min(h - 1, Math.max(0, y + dy)) * w;
    const r = y * w;
    for (let x = x0; x < x1; x += step) {
      const px = Math.min(w - 1, Math.max(0, x + dx));
      const d = cur[r + x]! - prev[py + px]!;
      s += d < 0 ? -d : d;
    }
    if (s > limit) return s;
  }
  return s;
}

/**
 * Backward warp: out(p) = matte(p + v(p)), v interpolated bilinearly between block centres
 * (no seams) and the matte sampled bilinearly. One pass over the output.
 */
export function warpMatte(matte: Uint8Array, width: number, height: number, field: MotionField, out: Uint8Array = new Uint8Array(width * height)): Uint8Array {
  const { cols, rows, block, vx, vy } = field;
  const [cx0, cx1, cfx] = blockAxis(width, block, cols);
  const [cy0, cy1, cfy] = blockAxis(height, block, rows);
  const maxX = width - 1;
  const maxY = height - 1;
  // The vertical half of the vector interpolation is shared by a whole row: done once per row
  // on the grid columns, so each pixel only interpolates across.
  const rowX = new Float32Array(cols);
  const rowY = new Float32Array(cols);
  for (let y = 0, i = 0; y < height; y++) {
    const r0 = cy0[y]! * cols;
    const r1 = cy1[y]! * cols;
    const wy = cfy[y]!;
    for (let c = 0; c < cols; c++) {
      const ax = vx[r0 + c]!;
      const ay = vy[r0 + c]!;
      rowX[c] = ax + (vx[r1 + c]! - ax) * wy;
      rowY[c] = ay + (vy[r1 + c]! - ay) * wy;
    }
    for (let x = 0; x < width; x++, i++) {
      const a = cx0[x]!;
      const b = cx1[x]!;
      const wx = cfx[x]!;
      const ux = rowX[a]! + (rowX[b]! - rowX[a]!) * wx;
      const uy = rowY[a]! + (rowY[b]! - rowY[a]!) * wx;
      let sx = x + ux;
      let sy = y + uy;
      sx = sx < 0 ? 0 : sx > maxX ? maxX : sx;
      sy = sy < 0 ? 0 : sy > maxY ? maxY : sy;
      const ix = sx | 0;
      const iy = sy | 0;
      const fx = sx - ix;
      const fy = sy - iy;
      const jx = ix < maxX ? 1 : 0;
      const jy = iy < maxY ? width : 0;
      const p = iy * width + ix;
      const top = matte[p]! + (matte[p + jx]! - matte[p]!) * fx;
      const bot = matte[p + jy]! + (matte[p + jy + jx]! - matte[p + jy]!) * fx;
      out[i] = top + (bot - top) * fy + 0.5;
    }
  }
  return out;
}

const axisCache = new Map<string, [Int32Array, Int32Array, Float32Array]>();

/** Per pixel: the two nearest block centres along one axis and the weight of the second. */
function blockAxis(size: number, block: number, cells: number): [Int32Array, Int32Array, Float32Array] {
  const key = `${size}:${block}:${cells}`;
  let t = axisCache.get(key);
  if (t) return t;
  const i0 = new Int32Array(size);
  const i1 = new Int32Array(size);
  const f = new Float32Array(size);
  for (let p = 0; p < size; p++) {
    const pos = Math.min(cells - 1, Math.max(0, (p + 0.5) / block - 0.5));
    const lo = Math.floor(pos);
    i0[p] = lo;
    i1[p] = Math.min(cells - 1, lo + 1);
    f[p] = pos - lo;
  }
  t = [i0, i1, f];
  axisCache.set(key, t);
  return t;
}

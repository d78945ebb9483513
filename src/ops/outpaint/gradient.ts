import type { Level } from './pyramid.js';

/**
 * Gradient-domain render of the band (Pérez et al. 2003, "Poisson image editing", used for
 * patch compositing as in Image Melding, Darabi et al. 2012): the band is re-solved so that its
 * gradients are those of the pixels it copied, with the original as the fixed boundary.
 *
 * Why: the best-patch render copies every band pixel from one source pixel, so the band is a
 * mosaic of copied regions. Inside a region the copy is the photo itself; where two regions meet
 * the colours need not match, and at the coarse scales a region can be a whole block of
 * background (a flat yellow block on the fruits, a lighter block of leaf on the butterfly) whose
 * edge is a hard step the photo never had. In the gradient domain a pixel's neighbours ask for
 * the differences their sources had with the pixels beside them; across a region edge the two
 * sides' requests are averaged, so the step is spread smoothly over the regions instead of drawn
 * as a line, and every texture gradient is kept (no detail is lost, unlike a blur). The same
 * holds at the old border: the band meets the original with the source's own gradient.
 *
 * `from[i]` is the canvas index of the original pixel that band pixel i was copied from (-1:
 * none, left as is). Solved by conjugate gradients from the copied band, at most `iterations`
 * steps: the correction is smooth, and a step spreads about one pixel per iteration, further than
 * the blocks it has to reconcile at the bench's sizes.
 */
export function gradientRender(L: Level, from: Int32Array, iterations: number): void {
  const { w, h, img, kx0, ky0, kx1, ky1 } = L;
  const known = (x: number, y: number) => x >= kx0 && x < kx1 && y >= ky0 && y < ky1;
  // Compact indices of the band pixels being solved.
  const id = new Int32Array(w * h).fill(-1);
  const pix: number[] = [];
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      if (known(x, y) || from[y * w + x]! < 0) continue;
      id[y * w + x] = pix.length;
      pix.push(y * w + x);
    }
  const n = pix.length;
  if (n === 0) return;
  const nb = new Int32Array(4 * n).fill(-1);
  const deg = new Uint8Array(n);
  const b = new Float64Array(3 * n);
  const DX = [1, -1, 0, 0],
    DY = [0, 0, 1, -1];
  const inKnown = (i: number, dx: number, dy: number) => {
    const x = (i % w) + dx,
      y = Math.floor(i / w) + dy;
    return known(x, y) ? y * w + x : -1;
  };
  for (let k = 0; k < n; k++) {
    const p = pix[k]!;
    const px = p % w,
      py = (p - px) / w;
    const sp = from[p]!;
    for (let j = 0; j < 4; j++) {
      const qx = px + DX[j]!,
        qy = py + DY[j]!;
      if (qx < 0 || qy < 0 || qx >= w || qy >= h) continue;
      const q = qy * w + qx;
      deg[k]!++;
      // Guidance p - q: the source's own difference, from p's side and (for a band q) from q's.
      let g0 = 0,
        g1 = 0,
        g2 = 0,
        cnt = 0;
      const a = inKnown(sp, DX[j]!, DY[j]!);
      if (a >= 0) {
        g0 += img[sp * 3]! - img[a * 3]!;
        g1 += img[sp * 3 + 1]! - img[a * 3 + 1]!;
        g2 += img[sp * 3 + 2]! - img[a * 3 + 2]!;
        cnt++;
      }
      const qk = known(qx, qy);
      const sq = qk ? -1 : from[q]!;
      if (sq >= 0) {
        const c = inKnown(sq, -DX[j]!, -DY[j]!);
        if (c >= 0) {
          g0 += img[c * 3]! - img[sq * 3]!;
          g1 += img[c * 3 + 1]! - img[sq * 3 + 1]!;
          g2 += img[c * 3 + 2]! - img[sq * 3 + 2]!;
          cnt++;
        }
      }
      if (cnt === 0) {
        // No source difference to go by: keep the rendered one.
        g0 = img[p * 3]! - img[q * 3]!;
        g1 = img[p * 3 + 1]! - img[q * 3 + 1]!;
        g2 = img[p * 3 + 2]! - img[q * 3 + 2]!;
        cnt = 1;
      }
      // Only a moderate step is dissolved (a block of the same background copied lighter or
      // darker); a large one is an object's edge and is kept as rendered, or the object's colour
      // would bleed into the band around it (a red disc carried across the seam turned the
      // texture beyond it pink).
      b[3 * k] += keepEdge(img[p * 3]! - img[q * 3]!, g0 / cnt);
      b[3 * k + 1] += keepEdge(img[p * 3 + 1]! - img[q * 3 + 1]!, g1 / cnt);
      b[3 * k + 2] += keepEdge(img[p * 3 + 2]! - img[q * 3 + 2]!, g2 / cnt);
      const qi = id[q]!;
      if (qi >= 0) nb[4 * k + j] = qi;
      else {
        // A fixed neighbour (original, or a band pixel left as is): its value moves to the right side.
        b[3 * k] += img[q * 3]!;
        b[3 * k + 1] += img[q * 3 + 1]!;
        b[3 * k + 2] += img[q * 3 + 2]!;
      }
    }
  }
  // Conjugate gradients on deg x_p - sum of band neighbours x_q = b_p (all three channels at once:
  // the operator is the same for each, so the stacked system is still symmetric positive definite).
  const x = new Float64Array(3 * n);
  for (let k = 0; k < n; k++) for (let c = 0; c < 3; c++) x[3 * k + c] = img[pix[k]! * 3 + c]!;
  // Screened Poisson: a weak pull toward the copied pixels keeps each correction local.
  for (let i = 0; i < 3 * n; i++) b[i] += SCREEN * x[i]!;
  const apply = (v: Float64Array, out: Float64Array) => {
    for (let k = 0; k < n; k++) {
      const d = deg[k]! + SCREEN;
      let s0 = d * v[3 * k]!,
        s1 = d * v[3 * k + 1]!,
        s2 = d * v[3 * k + 2]!;
      for (let j = 0; j < 4; j++) {
        const q = nb[4 * k + j]!;
        if (q < 0) continue;
        s0 -= v[3 * q]!;
        s1 -= v[3 * q + 1]!;
        s2 -= v[3 * q + 2]!;
      }
      out[3 * k] = s0;
      out[3 * k + 1] = s1;
      out[3 * k + 2] = s2;
    }
  };
  const r = new Float64Array(3 * n);
  const Ap = new Float64Array(3 * n);
  apply(x, Ap);
  for (let i = 0; i < 3 * n; i++) r[i] = b[i]! - Ap[i]!;
  const p = Float64Array.from(r);
  let rr = 0;
  for (let i = 0; i < 3 * n; i++) rr += r[i]! * r[i]!;
  const stop = 1e-4 * 3 * n; // mean squared residual of 1e-4 (8-bit units): done
  for (let it = 0; it < iterations && rr > stop; it++) {
    apply(p, Ap);
    let pAp = 0;
    for (let i = 0; i < 3 * n; i++) pAp += p[i]! * Ap[i]!;
    const alpha = rr / pAp;
    let rr2 = 0;
    for (let i = 0; i < 3 * n; i++) {
      x[i] += alpha * p[i]!;
      r[i] -= alpha * Ap[i]!;
      rr2 += r[i]! * r[i]!;
    }
    const beta = rr2 / rr;
    rr = rr2;
    for (let i = 0; i < 3 * n; i++) p[i] = r[i]! + beta * p[i]!;
  }
  for (let k = 0; k < n; k++) for (let c = 0; c < 3; c++) img[pix[k]! * 3 + c] = x[3 * k + c]!;
}

/** Steps beyond the sources' own difference by more than this (8-bit units, per channel) are kept. */
const DISSOLVE = 24;

/** The guidance for a rendered difference `d` whose sources differ by `g`: g plus the part of the step beyond DISSOLVE. */
function keepEdge(d: number, g: number): number {
  const e = d - g;
  return e > DISSOLVE ? d - DISSOLVE : e < -DISSOLVE ? d + DISSOLVE : g;
}

/**
 * Weight of the pull toward the copied pixels (screened Poisson): a correction decays over about
 * 1 / sqrt(SCREEN) ~ 7 px from the edge that caused it. Without it the guidance of a mosaic of
 * many small copies (brick, left + right 25%: mortar lines meeting brick faces) is not a gradient
 * field, and its residue built up into bright and dark glows tens of pixels wide.
 */
const SCREEN = 0.02;

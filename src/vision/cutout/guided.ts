import { boxMean, downsample, PlaneCache } from '../../media/filters.js';

export interface GuideImage {
  data: Uint8Array;
  width: number;
  height: number;
  channels: number;
}

/** The coefficient solve's planes: tmp, the product, 13 means, 4 coefficients and their 4 means. */
const SOLVE_PLANES = 23;
/** Kept between images up to 512 K pixels at the solve's resolution (23 planes: 48 MB at most). */
const solvePlanes = new PlaneCache(1 << 19);

/**
 * Fast colour guided filter (He, Sun & Tang 2013; He & Sun 2015 "Fast Guided Filter"):
 * fits p ~ a.I + b in every window of the guide, with the linear coefficients solved
 * at 1/s resolution and applied at full resolution, so the output follows the edges of the
 * full-resolution image while costing O(N/s^2) for the solve plus one pass for the output.
 *
 * @param p   the signal to filter at guide resolution, 0..1
 * @param r   window radius in full-resolution pixels
 * @param eps regulariser on the 0..1 colour scale: larger = smoother, smaller = follows edges harder
 * @param s   subsampling factor for the coefficient solve
 */
export function guidedFilter(guide: GuideImage, p: Float32Array, r: number, eps: number, s: number): Float32Array {
  const { width: w, height: h, channels: ch, data } = guide;
  const n = w * h;
  const planes = [0, 1, 2].map((c) => downsampleChannel(data, ch, c, w, h, s));
  const low = downsample(p, w, h, s);
  const lw = low.width;
  const lh = low.height;
  const ln = lw * lh;
  const rl = Math.max(1, Math.round(r / s));
  // Every plane of the solve is written in full before it is read (PlaneCache hands them out uncleared).
  const scratch = solvePlanes.take(SOLVE_PLANES, ln);
  let taken = 0;
  const plane = () => scratch[taken++]!;
  const tmp = plane();
  const mean = (src: Float32Array) => boxMean(src, lw, lh, rl, plane(), tmp);
  // A product is only read by the mean taken of it right away, so one plane serves them all.
  const product = plane();
  const prod = (a: Float32Array, b: Float32Array) => {
    for (let i = 0; i < ln; i++) product[i] = a[i] * b[i];
    return product;
  };
  const [Ir, Ig, Ib] = planes as [Float32Array, Float32Array, Float32Array];
  const pl = low.data;
  const mr = mean(Ir),
    mg = mean(Ig),
    mb = mean(Ib),
    mp = mean(pl);
  const mrp = mean(prod(Ir, pl)),
    mgp = mean(prod(Ig, pl)),
    mbp = mean(prod(Ib, pl));
  const vrr = mean(prod(Ir, Ir)),
    vrg = mean(prod(Ir, Ig)),
    vrb = mean(prod(Ir, Ib));
  const vgg = mean(prod(Ig, Ig)),
    vgb = mean(prod(Ig, Ib)),
    vbb = mean(prod(Ib, Ib));

  const ar = plane(),
    ag = plane(),
    ab = plane(),
    bb = plane();
  for (let i = 0; i < ln; i++) {
    const r0 = mr[i],
      g0 = mg[i],
      b0 = mb[i],
      p0 = mp[i];
    const cr = mrp[i] - r0 * p0,
      cg = mgp[i] - g0 * p0,
      cb = mbp[i] - b0 * p0;
    const srr = vrr[i] - r0 * r0 + eps,
      srg = vrg[i] - r0 * g0,
      srb = vrb[i] - r0 * b0;
    const sgg = vgg[i] - g0 * g0 + eps,
      sgb = vgb[i] - g0 * b0,
      sbb = vbb[i] - b0 * b0 + eps;
    // Inverse of the symmetric 3x3 covariance by cofactors.
    const i00 = sgg * sbb - sgb * sgb,
      i01 = srb * sgb - srg * sbb,
      i02 = srg * sgb - srb * sgg;
    const i11 = srr * sbb - srb * srb,
      i12 = srb * srg - srr * sgb,
      i22 = srr * sgg - srg * srg;
    const det = srr * i00 + srg * i01 + srb * i02;
    const a0 = (i00 * cr + i01 * cg + i02 * cb) / det;
    const a1 = (i01 * cr + i11 * cg + i12 * cb) / det;
    const a2 = (i02 * cr + i12 * cg + i22 * cb) / det;
    ar[i] = a0;
    ag[i] = a1;
    ab[i] = a2;
    bb[i] = p0 - a0 * r0 - a1 * g0 - a2 * b0;
  }
  const Ar = mean(ar),
    Ag = mean(ag),
    Ab = mean(ab),
    B = mean(bb);

  // Apply at full resolution with the coefficients sampled bilinearly (pixel centres aligned).
  const q = new Float32Array(n);
  const xs0 = new Int32Array(w),
    xs1 = new Int32Array(w),
    xf = new Float32Array(w);
  for (let x = 0; x < w; x++) {
    const fx = Math.min(Math.max((x + 0.5) / s - 0.5, 0), lw - 1);
    xs0[x] = Math.floor(fx);
    xs1[x] = Math.min(xs0[x] + 1, lw - 1);
    xf[x] = fx - xs0[x];
  }
  for (let y = 0; y < h; y++) {
    const fy = Math.min(Math.max((y + 0.5) / s - 0.5, 0), lh - 1);
    const y0 = Math.floor(fy);
    const y1 = Math.min(y0 + 1, lh - 1);
    const wy = fy - y0;
    const r0 = y0 * lw,
      r1 = y1 * lw;
    let j = y * w * ch;
    for (let x = 0; x < w; x++, j += ch) {
      const a = r0 + xs0[x],
        b = r0 + xs1[x],
        c = r1 + xs0[x],
        d = r1 + xs1[x];
      const wx = xf[x];
      const w00 = (1 - wx) * (1 - wy),
        w01 = wx * (1 - wy),
        w10 = (1 - wx) * wy,
        w11 = wx * wy;
      const cr = Ar[a] * w00 + Ar[b] * w01 + Ar[c] * w10 + Ar[d] * w11;
      const cg = Ag[a] * w00 + Ag[b] * w01 + Ag[c] * w10 + Ag[d] * w11;
      const cb = Ab[a] * w00 + Ab[b] * w01 + Ab[c] * w10 + Ab[d] * w11;
      const c0 = B[a] * w00 + B[b] * w01 + B[c] * w10 + B[d] * w11;
      q[y * w + x] = (cr * data[j] + cg * data[j + 1] + cb * data[j + 2]) / 255 + c0;
    }
  }
  return q;
}

/**
 * Channel `c` of the guide on the 0..1 scale, area-downsampled by `s`: the same sums, in the same
 * order and float32 steps, as downsample() of that channel's full-resolution plane, without
 * building the plane (three image-sized planes per refinement).
 */
function downsampleChannel(data: Uint8Array, ch: number, c: number, w: number, h: number, s: number): Float32Array {
  const lw = Math.ceil(w / s);
  const lh = Math.ceil(h / s);
  const sum = new Float32Array(lw * lh);
  const cnt = new Float32Array(lw * lh);
  for (let y = 0; y < h; y++) {
    const ly = ((y / s) | 0) * lw;
    for (let x = 0, j = y * w * ch + c; x < w; x++, j += ch) {
      const i = ly + ((x / s) | 0);
      sum[i]! += Math.fround(data[j]! / 255);
      cnt[i]! += 1;
    }
  }
  for (let i = 0; i < sum.length; i++) sum[i]! /= cnt[i]!;
  return sum;
}

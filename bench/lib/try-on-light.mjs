// The try-on light measures of issue 35, shared by bench/try-on.mjs and test/ops/try-on/light.test.ts.
// Inputs are RGB byte images of one size: the person photo, the try-on result ("scene": the
// product) and the same render with the garment unlit ("flat": its own pixels, same geometry,
// same occlusion), plus a 0/1 region (where the garment is drawn on the torso).
//
// R = ln(Y_scene + 4) - ln(Y_flat + 4) is what the render did to the garment's luminance.
//
// lightMeasures (any photo): R regressed jointly on
//   T: the photo's large-scale light, ln of its luminance smoothed (normalised Gaussian over the
//      person mask, sigma 0.15 shoulder widths) less its median over the region, and
//   P: the rest of the photo's ln luminance (ln Y - that smoothing): the old clothing's pattern
//      (a football jersey's stripes, period ~0.3 shoulder widths, a print) and its folds,
// giving patternLeak (slope on P: 0 none of it reaches the garment, 1 all of it; meaningful on
// patterned clothing, where P is mostly pattern) and shadeCorr (corr(R, T), for the record: T
// still holds the clothing's large-scale albedo, so it is not the shading).
// rampMeasures (known light): the photo lit by a known left-to-right ramp and not; R between
// the two renders, averaged over 8 column bands, regressed on ln ramp: rampGain (1 the garment
// takes the scene's light, 0 flat) and rampCorr.
// "today" gives the same figures for the shading try-on applied before issue 35, reproduced
// here: ratio = clamp(exp(0.45 (ln smooth_0.1(Y) - median)), 0.72, 1.18).

function gaussian(src, w, h, sigma) {
  const r = Math.max(1, Math.round((Math.sqrt(4 * sigma * sigma + 1) - 1) / 2));
  const a = Float64Array.from(src);
  const b = new Float64Array(w * h);
  for (let pass = 0; pass < 3; pass++) {
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        let s = 0,
          n = 0;
        for (let k = Math.max(0, x - r); k <= Math.min(w - 1, x + r); k++) {
          s += a[y * w + k];
          n++;
        }
        b[y * w + x] = s / n;
      }
    }
    for (let x = 0; x < w; x++) {
      for (let y = 0; y < h; y++) {
        let s = 0,
          n = 0;
        for (let k = Math.max(0, y - r); k <= Math.min(h - 1, y + r); k++) {
          s += b[k * w + x];
          n++;
        }
        a[y * w + x] = s / n;
      }
    }
  }
  return a;
}

/** Normalised convolution of ln luminance over the mask (0..255). */
function smoothLog(Y, mask, w, h, sigma) {
  const m = new Float64Array(w * h),
    v = new Float64Array(w * h);
  for (let i = 0; i < w * h; i++) {
    m[i] = mask[i] >= 128 ? 1 : 0;
    v[i] = m[i] * Y[i];
  }
  const num = gaussian(v, w, h, sigma),
    den = gaussian(m, w, h, sigma);
  const out = new Float64Array(w * h);
  for (let i = 0; i < w * h; i++) out[i] = Math.log((den[i] > 1e-3 ? num[i] / den[i] : Y[i]) + 4);
  return out;
}

export function lumaOf(rgb, n) {
  const Y = new Float64Array(n);
  for (let i = 0; i < n; i++) Y[i] = 0.299 * rgb[i * 3] + 0.587 * rgb[i * 3 + 1] + 0.114 * rgb[i * 3 + 2];
  return Y;
}

/** Joint least squares R ~ a T + b P + c; returns [a, b]. */
function regress2(R, T, P) {
  const n = R.length;
  const mean = (a) => a.reduce((s, v) => s + v, 0) / n;
  const mr = mean(R),
    mt = mean(T),
    mp = mean(P);
  let stt = 0,
    spp = 0,
    stp = 0,
    srt = 0,
    srp = 0;
  for (let i = 0; i < n; i++) {
    const t = T[i] - mt,
      p = P[i] - mp,
      r = R[i] - mr;
    stt += t * t;
    spp += p * p;
    stp += t * p;
    srt += r * t;
    srp += r * p;
  }
  const det = stt * spp - stp * stp;
  if (Math.abs(det) < 1e-12) return [0, 0];
  return [(srt * spp - srp * stp) / det, (srp * stt - srt * stp) / det];
}

/** Pearson correlation of two equal-length arrays. */
export function corr(a, b) {
  const n = a.length;
  const ma = a.reduce((s, v) => s + v, 0) / n,
    mb = b.reduce((s, v) => s + v, 0) / n;
  let sab = 0,
    saa = 0,
    sbb = 0;
  for (let i = 0; i < n; i++) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) ** 2;
    sbb += (b[i] - mb) ** 2;
  }
  return saa && sbb ? sab / Math.sqrt(saa * sbb) : 0;
}

/** The pre-issue-35 shading's ln ratio per pixel (see above), its median taken over `idx`. */
function todayLn(Y, mask, width, height, sw, idx) {
  const t = smoothLog(Y, mask, width, height, 0.1 * sw);
  const v = idx.map((i) => t[i]).sort((a, b) => a - b);
  const med = v[v.length >> 1];
  return (i) => Math.min(Math.log(1.18), Math.max(Math.log(0.72), 0.45 * (t[i] - med)));
}

/**
 * photo, scene, flat: RGB bytes (width x height); mask: the person mask (0..255); region: 0/1
 * pixels to measure; sw: shoulder width in pixels.
 */
export function lightMeasures(photo, scene, flat, width, height, mask, region, sw) {
  const n = width * height;
  const Yp = lumaOf(photo, n),
    Ys = lumaOf(scene, n),
    Yf = lumaOf(flat, n);
  const sT = smoothLog(Yp, mask, width, height, 0.15 * sw);
  const idx = [];
  for (let i = 0; i < n; i++) if (region[i]) idx.push(i);
  if (idx.length < 50) return { patternLeak: NaN, shadeCorr: NaN, todayLeak: NaN, todayCorr: NaN, pixels: idx.length };
  const Tall = idx.map((i) => sT[i]);
  const med = [...Tall].sort((a, b) => a - b)[Tall.length >> 1];
  const T = Tall.map((t) => t - med);
  const P = idx.map((i) => Math.log(Yp[i] + 4) - sT[i]);
  const R = idx.map((i) => Math.log(Ys[i] + 4) - Math.log(Yf[i] + 4));
  const tl = todayLn(Yp, mask, width, height, sw, idx);
  const today = idx.map(tl);
  const [, patternLeak] = regress2(R, T, P);
  const [, todayLeak] = regress2(today, T, P);
  return { patternLeak, shadeCorr: corr(R, T), todayLeak, todayCorr: corr(today, T), pixels: idx.length };
}

/**
 * plain, lit: the photo and the photo times ramp(x) (RGB bytes); scenePlain, sceneLit: the
 * renders on each; region: 0/1 pixels to measure (the garment on the torso).
 */
export function rampMeasures(plain, lit, scenePlain, sceneLit, width, height, mask, region, sw, ramp) {
  const n = width * height;
  const idx = [];
  for (let i = 0; i < n; i++) if (region[i]) idx.push(i);
  const Ypl = lumaOf(plain, n),
    Yli = lumaOf(lit, n),
    Ysp = lumaOf(scenePlain, n),
    Ysl = lumaOf(sceneLit, n);
  const tPlain = todayLn(Ypl, mask, width, height, sw, idx),
    tLit = todayLn(Yli, mask, width, height, sw, idx);
  const xs = idx.map((i) => i % width);
  const x0 = Math.min(...xs),
    x1 = Math.max(...xs);
  const bins = Array.from({ length: 8 }, () => ({ x: 0, r: 0, t: 0, n: 0 }));
  for (const i of idx) {
    const x = i % width;
    const b = bins[Math.min(7, Math.floor(((x - x0) / (x1 - x0 + 1e-9)) * 8))];
    b.x += Math.log(ramp(x));
    b.r += Math.log(Ysl[i] + 4) - Math.log(Ysp[i] + 4);
    b.t += tLit(i) - tPlain(i);
    b.n++;
  }
  const full = bins.filter((b) => b.n > 100);
  const bx = full.map((b) => b.x / b.n),
    br = full.map((b) => b.r / b.n),
    bt = full.map((b) => b.t / b.n);
  return { rampGain: slope1(br, bx), rampCorr: corr(br, bx), todayRampGain: slope1(bt, bx), todayRampCorr: corr(bt, bx), bands: full.length };
}

/** Least squares slope of y on x (NaN when x is constant). */
export function slope1(y, x) {
  const n = y.length;
  const mx = x.reduce((s, v) => s + v, 0) / n,
    my = y.reduce((s, v) => s + v, 0) / n;
  let sxy = 0,
    sxx = 0;
  for (let i = 0; i < n; i++) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) ** 2;
  }
  return sxx ? sxy / sxx : NaN;
}

/** Mean chroma magnitude (YCbCr levels) over the pixels where `sel` is 1 (all when null). */
export function meanChroma(rgb, n, sel = null) {
  let s = 0,
    k = 0;
  for (let i = 0; i < n; i++) {
    if (sel && !sel[i]) continue;
    const r = rgb[i * 3],
      g = rgb[i * 3 + 1],
      b = rgb[i * 3 + 2];
    s += Math.hypot(-0.168736 * r - 0.331264 * g + 0.5 * b, 0.5 * r - 0.418688 * g - 0.081312 * b);
    k++;
  }
  return k ? s / k : NaN;
}

/** Mean luminance (levels) of an RGB image, over `sel` (0/1) when given. */
export function meanLuma(rgb, n, sel = null) {
  let s = 0,
    k = 0;
  for (let i = 0; i < n; i++) {
    if (sel && !sel[i]) continue;
    s += 0.299 * rgb[i * 3] + 0.587 * rgb[i * 3 + 1] + 0.114 * rgb[i * 3 + 2];
    k++;
  }
  return k ? s / k : NaN;
}

/** The person photo with every channel scaled by `f` (a dimmer exposure of the same scene). */
export function dimmed(rgb, f) {
  const out = Buffer.from(rgb);
  for (let i = 0; i < out.length; i++) out[i] = Math.round(rgb[i] * f);
  return out;
}

/**
 * Exposure (issue 35, sixth round): the same person rendered from the photo and from the photo
 * at `f` x its exposure (dimmed). exposureGain = ln(garment mean luminance, dim / normal) / ln f
 * over the torso garment region: 1 when the garment takes the scene's exposure as the photo's own
 * pixels do, 0 when it keeps its studio level (the relative shading alone cannot see a global
 * change). Clipped highlights in the normal photo make it a little under 1.
 */
export function exposureGain(out, dimOut, n, sel, f) {
  return Math.log(meanLuma(dimOut, n, sel) / meanLuma(out, n, sel)) / Math.log(f);
}

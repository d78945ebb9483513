/**
 * Image and mask measures for the benches and the tests that judge quality (PSNR, SSIM, the seam
 * figure for a filled band against the real pixels it replaced, mask IoU, alpha scores). Not
 * part of imgtool itself, so they live here rather than in src/. All work on 8-bit RGB canvases;
 * SSIM and the seam figure on luma (BT.601).
 *
 * @typedef {{ x0: number; y0: number; x1: number; y1: number }} Rect
 * @typedef {{ iou: number; mae: number; boundary: number }} AlphaScores mae: mean absolute alpha error, 0..1; boundary: the same within `band` px of the true edge
 */
function luma(rgb, n) {
  const y = new Float32Array(n);
  for (let i = 0, j = 0; i < n; i++, j += 3) y[i] = 0.299 * rgb[j] + 0.587 * rgb[j + 1] + 0.114 * rgb[j + 2];
  return y;
}
/** PSNR in dB over the rectangle, all three channels. */
export function psnr(a, b, width, r) {
  let se = 0;
  let n = 0;
  for (let y = r.y0; y < r.y1; y++) {
    for (let i = (y * width + r.x0) * 3, e = (y * width + r.x1) * 3; i < e; i++) {
      const d = a[i] - b[i];
      se += d * d;
      n++;
    }
  }
  const mse = se / Math.max(1, n);
  return mse === 0 ? Infinity : 10 * Math.log10((255 * 255) / mse);
}
/** Separable sampled Gaussian of `sigma` (out to 3 sigma, edges clamped) of a w x h float plane. */
export function gaussianBlur(src, w, h, sigma) {
  const r = Math.ceil(sigma * 3);
  const k = new Float32Array(2 * r + 1);
  let sum = 0;
  for (let i = -r; i <= r; i++) sum += k[i + r] = Math.exp(-(i * i) / (2 * sigma * sigma));
  for (let i = 0; i < k.length; i++) k[i] /= sum;
  const tmp = new Float32Array(w * h);
  const out = new Float32Array(w * h);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      let s = 0;
      for (let i = -r; i <= r; i++) s += k[i + r] * src[y * w + Math.min(w - 1, Math.max(0, x + i))];
      tmp[y * w + x] = s;
    }
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      let s = 0;
      for (let i = -r; i <= r; i++) s += k[i + r] * tmp[Math.min(h - 1, Math.max(0, y + i)) * w + x];
      out[y * w + x] = s;
    }
  return out;
}
/** Separable Gaussian blur (11 taps, sigma 1.5, edges clamped), as in Wang et al.'s SSIM. */
function gauss(src, w, h) {
  const k = [];
  let s = 0;
  for (let i = -5; i <= 5; i++) {
    const v = Math.exp(-(i * i) / (2 * 1.5 * 1.5));
    k.push(v);
    s += v;
  }
  for (let i = 0; i < k.length; i++) k[i] /= s;
  const tmp = new Float32Array(w * h);
  const out = new Float32Array(w * h);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      let a = 0;
      for (let i = -5; i <= 5; i++) a += k[i + 5] * src[y * w + Math.min(w - 1, Math.max(0, x + i))];
      tmp[y * w + x] = a;
    }
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      let a = 0;
      for (let i = -5; i <= 5; i++) a += k[i + 5] * tmp[Math.min(h - 1, Math.max(0, y + i)) * w + x];
      out[y * w + x] = a;
    }
  return out;
}
/** Mean SSIM (luma, Gaussian window) of the windows centred inside the rectangle. */
export function ssim(a, b, width, height, r) {
  const n = width * height;
  const x = luma(a, n);
  const y = luma(b, n);
  const xx = new Float32Array(n),
    yy = new Float32Array(n),
    xy = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    xx[i] = x[i] * x[i];
    yy[i] = y[i] * y[i];
    xy[i] = x[i] * y[i];
  }
  const mx = gauss(x, width, height),
    my = gauss(y, width, height);
  const sxx = gauss(xx, width, height),
    syy = gauss(yy, width, height),
    sxy = gauss(xy, width, height);
  const c1 = (0.01 * 255) ** 2,
    c2 = (0.03 * 255) ** 2;
  let sum = 0;
  let cnt = 0;
  for (let yy0 = r.y0; yy0 < r.y1; yy0++)
    for (let xx0 = r.x0; xx0 < r.x1; xx0++) {
      const i = yy0 * width + xx0;
      const ux = mx[i],
        uy = my[i];
      const vx = sxx[i] - ux * ux,
        vy = syy[i] - uy * uy,
        cxy = sxy[i] - ux * uy;
      sum += ((2 * ux * uy + c1) * (2 * cxy + c2)) / ((ux * ux + uy * uy + c1) * (vx + vy + c2));
      cnt++;
    }
  return sum / Math.max(1, cnt);
}
/**
 * Seam figure: mean luma gradient magnitude across the old border (between the last original
 * row/column and the first new one) minus the image's typical gradient in that direction,
 * measured over the original. Near 0 = the border is as busy as the picture; strongly positive
 * = a visible cut; strongly negative = a smear (flat stretch). Compare by absolute value.
 */
export function seamFigure(canvas, width, height, known, side) {
  const Y = luma(canvas, width * height);
  const horizontal = side === 'left' || side === 'right';
  let typ = 0;
  let tn = 0;
  for (let y = known.y0; y < known.y1; y++)
    for (let x = known.x0; x < known.x1; x++) {
      const i = y * width + x;
      if (horizontal ? x + 1 < known.x1 : y + 1 < known.y1) {
        typ += Math.abs(Y[horizontal ? i + 1 : i + width] - Y[i]);
        tn++;
      }
    }
  let seam = 0;
  let sn = 0;
  if (horizontal) {
    const xa = side === 'right' ? known.x1 - 1 : known.x0 - 1;
    for (let y = known.y0; y < known.y1; y++, sn++) seam += Math.abs(Y[y * width + xa + 1] - Y[y * width + xa]);
  } else {
    const ya = side === 'bottom' ? known.y1 - 1 : known.y0 - 1;
    for (let x = known.x0; x < known.x1; x++, sn++) seam += Math.abs(Y[(ya + 1) * width + x] - Y[ya * width + x]);
  }
  return seam / Math.max(1, sn) - typ / Math.max(1, tn);
}
/**
 * Mean Sobel gradient magnitude of luma over the rectangle {x0, y0, x1, y1} (taps clamped to the
 * canvas): the "detail" of a region. A filled band's detail over the true band's is its detail
 * ratio: near 1 for content as busy as the photo, well below 1 for a smear.
 */
export function sobelMean(canvas, width, height, r) {
  const Y = (x, y) => {
    const i = (Math.min(height - 1, Math.max(0, y)) * width + Math.min(width - 1, Math.max(0, x))) * 3;
    return 0.299 * canvas[i] + 0.587 * canvas[i + 1] + 0.114 * canvas[i + 2];
  };
  let sum = 0;
  let n = 0;
  for (let y = r.y0; y < r.y1; y++) {
    for (let x = r.x0; x < r.x1; x++, n++) {
      const a = Y(x - 1, y - 1),
        b = Y(x, y - 1),
        c = Y(x + 1, y - 1);
      const d = Y(x - 1, y),
        f = Y(x + 1, y);
      const g = Y(x - 1, y + 1),
        h = Y(x, y + 1),
        k = Y(x + 1, y + 1);
      const gx = c + 2 * f + k - a - 2 * d - g;
      const gy = g + 2 * h + k - a - 2 * b - c;
      sum += Math.sqrt(gx * gx + gy * gy);
    }
  }
  return sum / Math.max(1, n);
}

/** Intersection over union of two masks thresholded at half (1 when both are empty). */
export function maskIou(a, b) {
  let inter = 0;
  let union = 0;
  for (let i = 0; i < a.length; i++) {
    const p = a[i] >= 128;
    const q = b[i] >= 128;
    if (p && q) inter++;
    if (p || q) union++;
  }
  return union ? inter / union : 1;
}
/**
 * Scores a predicted alpha against the truth: IoU of alpha >= 128, mean absolute error, and the
 * error in the band around the true edge (semi-transparent truth pixels and 128-crossings),
 * band membership found with an integral image of the edge map.
 */
export function scoreAlpha(pred, truth, w, h, band = 3) {
  const edge = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      const t = truth[i] >= 128;
      if ((truth[i] > 0 && truth[i] < 255) || (x + 1 < w && truth[i + 1] >= 128 !== t) || (y + 1 < h && truth[i + w] >= 128 !== t)) edge[i] = 1;
    }
  }
  const S = new Int32Array((w + 1) * (h + 1));
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) S[(y + 1) * (w + 1) + x + 1] = edge[y * w + x] + S[y * (w + 1) + x + 1] + S[(y + 1) * (w + 1) + x] - S[y * (w + 1) + x];
  let inter = 0,
    union = 0,
    abs = 0,
    bandErr = 0,
    bandN = 0;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      const p = pred[i] >= 128,
        t = truth[i] >= 128;
      if (p && t) inter++;
      if (p || t) union++;
      const e = Math.abs(pred[i] - truth[i]) / 255;
      abs += e;
      const x0 = Math.max(0, x - band),
        x1 = Math.min(w, x + band + 1),
        y0 = Math.max(0, y - band),
        y1 = Math.min(h, y + band + 1);
      if (S[y1 * (w + 1) + x1] - S[y0 * (w + 1) + x1] - S[y1 * (w + 1) + x0] + S[y0 * (w + 1) + x0] > 0) {
        bandErr += e;
        bandN++;
      }
    }
  }
  return { iou: union ? inter / union : 1, mae: abs / (w * h), boundary: bandN ? bandErr / bandN : 0 };
}

// The painted neck's grain against the photo's own skin (issue 35, round 22). Plain .mjs: the
// bench measures without importing the code it judges.
import { gaussianBlur } from './metrics.mjs';
import { isSkin } from './try-on-metrics.mjs';
import { faceColumns } from './try-on-seams.mjs';

/** Luma less its Gaussian mean over this many pixels (over the region only): the grain. */
const LIGHT_SIGMA = 2;
/** A pixel is measured when the whole square this far around it lies in the region. */
const INSET = 3;
/** Fewer measured pixels than this: no figure. */
const MIN_PIXELS = 64;

function luma(rgb, p) {
  return 0.299 * rgb[p * 3] + 0.587 * rgb[p * 3 + 1] + 0.114 * rgb[p * 3 + 2];
}

/**
 * The grain of `rgb` over the pixels `inside(x, y)` in the box x0..x1, y0..y1 (inclusive): each
 * pixel's luma less the Gaussian mean (LIGHT_SIGMA) of the region's luma around it, on pixels
 * with the whole square INSET around them in the region; the median absolute deviation x 1.4826
 * (levels), and how many pixels were measured.
 */
export function grainOf(rgb, width, inside, x0, y0, x1, y1) {
  const w = x1 - x0 + 1,
    h = y1 - y0 + 1;
  if (w < 1 || h < 1) return { std: null, n: 0 };
  const m = new Float64Array(w * h),
    l = new Float64Array(w * h);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      if (!inside(x + x0, y + y0)) continue;
      m[y * w + x] = 1;
      l[y * w + x] = luma(rgb, (y + y0) * width + x + x0);
    }
  const num = gaussianBlur(l, w, h, LIGHT_SIGMA),
    den = gaussianBlur(m, w, h, LIGHT_SIGMA);
  const dev = [];
  for (let y = INSET; y < h - INSET; y++)
    for (let x = INSET; x < w - INSET; x++) {
      let all = true;
      for (let dy = -INSET; dy <= INSET && all; dy++) for (let dx = -INSET; dx <= INSET && all; dx++) all = m[(y + dy) * w + x + dx] === 1;
      if (!all) continue;
      const j = y * w + x;
      dev.push(Math.abs(l[j] - num[j] / den[j]));
    }
  if (dev.length < MIN_PIXELS) return { std: null, n: dev.length };
  dev.sort((a, b) => a - b);
  return { std: 1.4826 * dev[dev.length >> 1], n: dev.length };
}

/**
 * neckGrain: the painted neck's grain over the face's. The painted neck: in the face's columns
 * (the nose's, half the ear-to-ear span either side, as neckFlat), from the mouth row down to
 * 0.5 shoulder widths below the shoulder line, the pixels the unlit render changed (> 12 levels)
 * the same in the render of the colour-complemented garment (within 2 levels): paint that is
 * not the garment's. The face's skin: the same columns from the eye row to the mouth row, the
 * skin rule on the photo. Both by grainOf (the unlit render for the paint, the photo for the
 * face). 0: flat paint; 1: as grainy as the face. null when either has too few pixels.
 */
export function neckGrain(ref, flat, inv, width, height, lms) {
  const cols = faceColumns(width, lms);
  if (!cols) return { neckGrain: null, paintedPx: 0 };
  const { sw, shY, mouthY, x0, x1 } = cols;
  const eyeY = Math.round((lms[2][1] + lms[5][1]) / 2);
  const diff = (a, b, p) => Math.max(Math.abs(a[p * 3] - b[p * 3]), Math.abs(a[p * 3 + 1] - b[p * 3 + 1]), Math.abs(a[p * 3 + 2] - b[p * 3 + 2]));
  const painted = (x, y) => {
    const p = y * width + x;
    return diff(ref, flat, p) > 12 && diff(flat, inv, p) <= 2;
  };
  const paint = grainOf(flat, width, painted, x0, Math.max(0, Math.round(mouthY)), x1, Math.min(height - 1, Math.round(shY + 0.5 * sw)));
  const face = grainOf(
    ref,
    width,
    (x, y) => isSkin(ref[(y * width + x) * 3], ref[(y * width + x) * 3 + 1], ref[(y * width + x) * 3 + 2]),
    x0,
    Math.max(0, eyeY),
    x1,
    Math.min(height - 1, Math.round(mouthY)),
  );
  return { neckGrain: paint.std !== null && face.std ? paint.std / face.std : null, paintedPx: paint.n };
}

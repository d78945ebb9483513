import type { GarmentLandmarks } from './garment.js';
import { median, plane, type Plane, runAt } from './raster.js';

/** A strap is no wider than this share of the bodice's top row, */
const STRAP_WIDTH = 0.2;
/** and at least this many times as long as it is wide. */
const STRAP_LONG = 1.5;
/** Its straight part is continued above its top by this share of its length. */
const EXTEND = 1;
/** The strap's cap (its rounded end) is where it is narrower than this share of its width. */
const CAP = 0.9;

/**
 * A dress's straps continued past their tops (the garment crop grown upwards to hold them): a
 * strap goes on over the shoulder to the back, so the person's outline, the neck and the head
 * end it, not its own rounded cap. The fit (fit-pose.ts) puts the strap's top on the shoulder
 * top; what is continued above it is cut by the outline and the occluders as the garment is
 * drawn. The garment photos' straps are short tabs with rounded ends: they read as tabs on the
 * chest (grace_hopper.jpg, basketball1.png), the old clothing showing above them where the
 * shoulder top lay above the straps' ends.
 *
 * Per strap (from each shoulder landmark, the highest garment pixel on its side, down through
 * the runs of the mask while they stay narrower than STRAP_WIDTH of the bodice's top row): its
 * width is the median run width, its slope a line through the run centres; the rows of its cap
 * (narrower than CAP of its width) and EXTEND of its length above its top take the first full
 * row's pixels, moved along the slope. Landmarks keep their places in the garment (the grown
 * rows shift every row down). Null when the garment has no strap STRAP_LONG times as long as it
 * is wide.
 */
export function squareStraps(rgba: Buffer, mask: Plane, lm: GarmentLandmarks): { rgba: Buffer; mask: Plane; landmarks: GarmentLandmarks } | null {
  const { width: w, height: h } = mask;
  const bodice = Math.max(1, lm.chestR - lm.chestL + 1);
  const straps: { ys: number[]; runs: [number, number][]; from: number; width: number; slope: number; extend: number }[] = [];
  for (const top of [lm.shoulderL, lm.shoulderR]) {
    const ys: number[] = [],
      runs: [number, number][] = [];
    let x = Math.round(top.x);
    for (let y = Math.round(top.y); y < Math.min(h, lm.chestY); y++) {
      const run = runAt(mask, y, x);
      if (!run || run[1] - run[0] + 1 > STRAP_WIDTH * bodice) break;
      ys.push(y);
      runs.push(run);
      x = Math.round((run[0] + run[1]) / 2);
    }
    if (!ys.length) continue;
    const width = median(runs.map(([l, r]) => r - l + 1));
    if (ys.length < STRAP_LONG * width) continue;
    const from = runs.findIndex(([l, r]) => r - l + 1 >= CAP * width);
    // The slope of the run centres below the cap (least squares, x per row).
    const rest = ys.map((y, j) => ({ y, c: (runs[j]![0] + runs[j]![1]) / 2 })).slice(from);
    const my = rest.reduce((s, p) => s + p.y, 0) / rest.length,
      mc = rest.reduce((s, p) => s + p.c, 0) / rest.length;
    const vy = rest.reduce((s, p) => s + (p.y - my) ** 2, 0);
    const slope = vy > 0 ? rest.reduce((s, p) => s + (p.y - my) * (p.c - mc), 0) / vy : 0;
    straps.push({ ys, runs, from, width, slope, extend: Math.round(EXTEND * ys.length) });
  }
  if (!straps.length) return null;
  // Rows to add above the crop so each continuation fits.
  const pad = Math.max(0, ...straps.map((s) => s.extend - s.ys[0]!));
  const H = h + pad;
  const out = Buffer.alloc(w * H * 4);
  rgba.copy(out, pad * w * 4);
  const m = new Uint8Array(w * H);
  m.set(mask.data, pad * w);
  for (const s of straps) {
    const ySrc = s.ys[s.from]! + pad;
    const [l, r] = s.runs[s.from]!;
    for (let y = s.ys[0]! + pad - s.extend; y < ySrc; y++) {
      const dx = Math.round(s.slope * (y - ySrc));
      // The cap's rows and those above it: cleared across the full row's span first (the cap's
      // anti-aliased rim), then the full row's pixels.
      for (let x = Math.max(0, l - 1 + dx); x <= Math.min(w - 1, r + 1 + dx); x++) {
        const sx = x - dx;
        if (sx < 0 || sx >= w) continue;
        const d = (y * w + x) * 4,
          src = (ySrc * w + sx) * 4;
        for (let c = 0; c < 4; c++) out[d + c] = out[src + c]!;
        m[y * w + x] = m[ySrc * w + sx]!;
      }
    }
  }
  const down = (p: { x: number; y: number }) => ({ x: p.x, y: p.y + pad });
  const landmarks: GarmentLandmarks = {
    ...lm,
    top: Math.min(...straps.map((s) => s.ys[0]! + pad - s.extend), lm.top + pad),
    bottom: lm.bottom + pad,
    neck: down(lm.neck),
    shoulderL: down(lm.shoulderL),
    shoulderR: down(lm.shoulderR),
    chestY: lm.chestY + pad,
    waistY: lm.waistY + pad,
    hemY: lm.hemY + pad,
  };
  return { rgba: out, mask: plane(w, H, m), landmarks };
}

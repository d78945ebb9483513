import { gaussianBlurLarge } from '../../media/filters.js';
import { clamp, padBox } from './raster.js';

export interface BandOptions {
  /** How far the band reaches from the garment (pixels). */
  reach: number;
  /** A gap this wide or narrower (pixels) is filled whole; 0: no pockets. */
  pocket?: number;
  /** Per pixel (image index), how strongly a pocket is filled there (0..1). */
  pocketWeight?: (i: number) => number;
  /** The garment's edge this deep (pixels) gives no colour and is blended into the band; 0: off. */
  rim?: number;
  /**
   * The photo under the garment (RGB bytes, as `out`): the share of each pixel the garment
   * leaves is replaced by the band. Without it that share is taken to be `out`'s (exact where
   * the garment covers none of the pixel).
   */
  photo?: Uint8Array;
  /**
   * The scene's light the garment was drawn with (a factor per image pixel, shade.ts): the band
   * averages the garment's colour without it and takes each pixel's own, so it goes on lit as
   * the garment would be (a band coloured by the lit garment's average carried the light of the
   * garment beside it, flattening the scene's light at the garment's sides).
   */
  light?: Float32Array;
}

/**
 * The band around the drawn garment that it does not reach but that the old clothing still
 * shows in (a collar above the new neckline, a jersey's shoulder beside a narrower shirt, the
 * rim between the garment's edge and the body's outline) is filled from the garment itself:
 * the garment's drawn colour, averaged nearby (normalised Gaussian of colour x coverage,
 * sigma `reach` / 2), laid over the pixels the caller allows (inside the person's outline, not
 * head, hair, skin or what is in front), fading out from `reach` / 2 to `reach` from the
 * garment so the band does not end in a hard line. Pixels the garment covers keep their colour
 * (but for its rim, below). In a pixel the garment covers in part the band takes, in place of
 * the photo there (`photo`), all the garment leaves of what it may fill where the band goes on
 * beside it, and where a stop lies beside it only the share it blended over the pixel before
 * (so that edge stays soft).
 *
 * A pocket (`pocket` pixels wide or less between the garment and where the band must stop: the
 * person's outline, the head, a forearm in front) is filled whole instead, fading out between
 * `pocket` and 4/3 `pocket`: there the band ends at the outline or at what is in front, not
 * over the old clothing, so there is no line to soften, and a fading band left the old
 * clothing's outer half showing (a bulky suit's arm beside a coat's sleeve, a jersey's edge
 * beside the t-shirt's body). Its colour comes from a wider average (sigma `reach`) where the
 * band's own has no garment near enough. `pocketWeight` (0..1) weights the pockets' fill per pixel.
 *
 * The garment's own edge, `rim` pixels deep, gives the band no colour (the garment photos are
 * modelled up to their outline, a hem a shade darker), and where the band continues the garment
 * that edge takes the band's colour: a dark hem line with the band's flat colour beyond it read
 * as a seam.
 *
 * out: RGB bytes of the whole image, modified in place; cover: the garment's drawn alpha
 * (0..1), raised in place by the band's (so 1 - cover is what is left of the photo); allow:
 * where the band may be filled (0..1, below 0.5 a stop); box: the drawn garment's bounding box.
 * Returns the box of the pixels written (inclusive), or null.
 */
export function fillBand(
  out: Uint8Array,
  cover: Float32Array,
  allow: (i: number) => number,
  width: number,
  height: number,
  box: { x: number; y: number; width: number; height: number },
  { reach, pocket = 0, pocketWeight = () => 1, rim = 0, photo, light }: BandOptions,
): { x0: number; y0: number; x1: number; y1: number } | null {
  const far = Math.max(reach, (4 / 3) * pocket);
  const pad = Math.ceil(far);
  const { x0, y0, w, h } = padBox({ x0: box.x, y0: box.y, x1: box.x + box.width - 1, y1: box.y + box.height - 1 }, pad, width, height);
  if (w < 2 || h < 2 || reach < 1) return null;
  const n = w * h;
  const m = new Float32Array(n);
  const col = [new Float32Array(n), new Float32Array(n), new Float32Array(n)];
  const ok = new Float64Array(n);
  // The garment's drawn alpha before the band (`cover` is raised as the band is laid).
  const drawn = new Float32Array(n);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const j = y * w + x,
        i = (y + y0) * width + x + x0;
      // Only pixels the garment owns outright give colour (its anti-aliased rim is mixed).
      const c = cover[i]! >= 0.9 ? 1 : 0;
      m[j] = c;
      drawn[j] = cover[i]!;
      if (c) for (let k = 0; k < 3; k++) col[k]![j] = out[i * 3 + k]! / (light ? Math.max(1e-3, light[i]!) : 1);
      // Where the band may go (allow), read once: below, every pixel the garment covers less
      // than 0.99 of takes it from here.
      ok[j] = cover[i]! >= 0.99 ? 1 : allow(i);
    }
  }
  const sigma = reach / 2;
  // The band's colour: the garment's, averaged, from its inside only (`rim` pixels in from its
  // edge) where that lies near; its edge's own where it does not (a sleeve narrower than twice
  // the rim).
  const inside = rim >= 1 ? insideRim(m, w, h, rim) : null;
  // `near`: the garment's own share nearby (its blurred coverage); colour c / d.
  const colour = (s: number) => {
    const near = gaussianBlurLarge(m, w, h, s),
      c = col.map((p) => gaussianBlurLarge(p, w, h, s));
    if (!inside) return { near, d: near, c };
    const d = gaussianBlurLarge(inside, w, h, s),
      ci = col.map((p) =>
        gaussianBlurLarge(
          p.map((v, j) => v * inside[j]!),
          w,
          h,
          s,
        ),
      );
    for (let j = 0; j < n; j++) {
      d[j] = d[j]! + 1e-3 * near[j]!;
      for (let k = 0; k < 3; k++) c[k]![j] = ci[k]![j]! + 1e-3 * c[k]![j]!;
    }
    return { near, d, c };
  };
  const own = colour(sigma);
  const den = own.near;
  const gap = pocket >= 1 ? pocketGap(m, ok, cover, x0, y0, width, height, w, h, far) : null;
  // Each pixel's pocket strength, smoothed (sigma reach / 4): the rays' ends are ragged, and
  // the pocket's edge drew jagged tips up a suit's collar ring.
  let inPocket: Float32Array | null = null;
  if (gap) {
    // Normalised over the pixels the band may reach (not the stops), so a pocket stays whole out
    // to its stop.
    const raw = new Float32Array(n),
      open = new Float32Array(n);
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        const j = y * w + x;
        if (gap.barrier[j]) continue;
        open[j] = 1;
        if (!(gap.dg[j]! <= far)) continue;
        const t = clamp(((4 / 3) * pocket - gap.gap[j]!) / (pocket / 3), 0, 1);
        raw[j] = t * t * (3 - 2 * t) * pocketWeight((y + y0) * width + x + x0);
      }
    }
    const sp = Math.max(1, reach / 4);
    const pNum = gaussianBlurLarge(raw, w, h, sp),
      pDen = gaussianBlurLarge(open, w, h, sp);
    inPocket = new Float32Array(n);
    for (let j = 0; j < n; j++) inPocket[j] = pDen[j]! > 1e-3 ? pNum[j]! / pDen[j]! : raw[j]!;
  }
  const wide = gap ? colour(reach) : null;
  // A Gaussian of a half-plane is 0.5 at its edge, ~0.16 at sigma, ~0.02 at 2 sigma (= reach).
  let bx0 = Infinity,
    by0 = Infinity,
    bx1 = -1,
    by1 = -1;
  const grow = (x: number, y: number) => {
    bx0 = Math.min(bx0, x + x0);
    bx1 = Math.max(bx1, x + x0);
    by0 = Math.min(by0, y + y0);
    by1 = Math.max(by1, y + y0);
  };
  // Each pixel's band strength were the garment not in it (allow x the fade), for the pixels
  // the garment covers in part (below).
  const strength = new Float32Array(n);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const j = y * w + x,
        i = (y + y0) * width + x + x0;
      if (cover[i]! >= 0.99) continue;
      const near = clamp((den[j]! - 0.02) / (0.16 - 0.02), 0, 1);
      let s = near * near * (3 - 2 * near);
      if (inPocket) s = Math.max(s, inPocket[j]!);
      if (s > 0) strength[j] = s * ok[j]!;
    }
  }
  // The scene's light at image pixel i for a colour, no brighter than its brightest channel
  // allows (as the garment is drawn: a clipped channel shifts hue).
  const litBy = (c: number[], i: number) => (light ? Math.min(light[i]!, Math.max(1, 255 / Math.max(c[0]!, c[1]!, c[2]!, 1))) : 1);
  const beside = (x: number, y: number) => {
    let sum = 0,
      count = 0;
    for (let dy = -1; dy <= 1; dy++) {
      for (let dx = -1; dx <= 1; dx++) {
        const qx = x + dx,
          qy = y + dy;
        if ((!dx && !dy) || qx < 0 || qy < 0 || qx >= w || qy >= h || drawn[qy * w + qx]! >= 0.5) continue;
        sum += strength[qy * w + qx]!;
        count++;
      }
    }
    return count ? sum / count : strength[y * w + x]!;
  };
  // The band's alpha per window pixel, for the rim below.
  const band = inside ? new Float32Array(n) : null;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const j = y * w + x,
        i = (y + y0) * width + x + x0;
      const cv = cover[i]!;
      if (cv >= 0.99 || strength[j]! <= 0) continue;
      // The share of the pixel the band takes. Where the garment covers the pixel in part and
      // the band goes on past it, all that the garment leaves (as strong as the band beside it:
      // the neighbours the garment covers less than half of), so the old clothing under the
      // garment's anti-aliased edge is covered; it showed as a dark line. At least the share the
      // band blended over the pixel, garment and photo alike, before (issue 35, round 15): where
      // a stop lies beside the edge (the neck, a forearm, the outline) the edge stays soft, and
      // at the outline that share hides the old clothing's edge the backdrop rule (edge-backdrop.ts)
      // cannot tell from a striped jersey.
      const blend = (1 - cv) * (1 - cv) * strength[j]!;
      const a = cv > 0.01 ? Math.max(blend, Math.min(ok[j]! - cv, (1 - cv) * beside(x, y))) : strength[j]!;
      if (a <= 0.01) continue;
      // The band's own average where a garment pixel is near enough, the wider one beyond.
      const useWide = wide !== null && wide.near[j]! > 1e-4;
      const t = clamp(den[j]! / 0.02, 0, 1);
      if (!useWide && t <= 0) continue;
      const base = [0, 1, 2].map((k) => {
        const c1 = t > 0 ? own.c[k]![j]! / own.d[j]! : 0;
        return useWide ? t * c1 + (1 - t) * (wide.c[k]![j]! / wide.d[j]!) : c1;
      });
      const lit = litBy(base, i);
      for (let k = 0; k < 3; k++) {
        const c = base[k]! * lit;
        // The photo's share replaced by the band's colour (an edge pixel the garment covers
        // half of keeps none of the old clothing under that half).
        const p = photo ? photo[i * 3 + k]! : out[i * 3 + k]!;
        out[i * 3 + k] = clamp(Math.round(out[i * 3 + k]! + (c - p) * a), 0, 255);
      }
      cover[i] = cv + a;
      if (band) band[j] = a;
      grow(x, y);
    }
  }
  if (bx1 < 0) return null;
  if (band && inside) {
    // The garment's edge where the band continues it takes the band's colour (the garment's
    // inside, averaged): fully out to `rim` pixels from the band, fading out by 2 `rim`. Where
    // its edge is its outer edge (over the backdrop, at a bare arm, at the neck) no band lies
    // beside it and it stays as drawn.
    const d = new Float32Array(n);
    for (let j = 0; j < n; j++) d[j] = band[j]! >= 0.5 ? 0 : Infinity;
    chamfer(d, w, h);
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        const j = y * w + x,
          i = (y + y0) * width + x + x0;
        // The garment's own pixels only (its anti-aliased edge among them), not the band's fade.
        if (!(drawn[j]! > 0) || !(own.d[j]! > 1e-4)) continue;
        // Only where the garment and the band hold the whole pixel: where the photo keeps a share
        // (a forearm's matte, the person's outline) it is left as drawn.
        const t = clamp((2 * rim - d[j]!) / rim, 0, 1) * clamp((cover[i]! - 0.9) / 0.09, 0, 1);
        if (t <= 0) continue;
        const base = [0, 1, 2].map((k) => own.c[k]![j]! / own.d[j]!);
        const lit = litBy(base, i);
        for (let k = 0; k < 3; k++) out[i * 3 + k] = clamp(Math.round(out[i * 3 + k]! * (1 - t) + base[k]! * lit * t), 0, 255);
        grow(x, y);
      }
    }
  }
  return { x0: bx0, y0: by0, x1: bx1, y1: by1 };
}

/** The garment pixels it owns outright (`m`) more than `rim` pixels (chamfer) from any it does not: 1, else 0. */
function insideRim(m: Float32Array, w: number, h: number, rim: number): Float32Array {
  const d = new Float32Array(w * h);
  for (let j = 0; j < d.length; j++) d[j] = m[j] ? Infinity : 0;
  chamfer(d, w, h);
  return d.map((v) => (v > rim ? 1 : 0));
}

/** A pocket's rays take at most this many steps to `far` (pocketGap). */
const RAY_STEPS = 160;

const FAN = [0, 25, -25].map((deg) => ({ c: Math.cos((deg * Math.PI) / 180), s: Math.sin((deg * Math.PI) / 180) }));

/**
 * Per window pixel within `far` of the garment: the width of the gap it lies in, measured from
 * the garment outwards: its distance to the garment (`dg`, to pixels it owns outright) plus how
 * far on, straight away from the garment (along the gradient of that distance), the nearest
 * stop lies (an uncovered pixel the band may not fill, allow < 0.5). Infinity where no stop
 * lies within `far` of the garment that way: a stop beside the pixel does not close a pocket
 * (the strip of a hand between a forearm kept in front and the background is not one). The
 * picture's border is a stop.
 */
function pocketGap(
  m: Float32Array,
  ok: Float64Array,
  cover: Float32Array,
  x0: number,
  y0: number,
  width: number,
  height: number,
  w: number,
  h: number,
  far: number,
) {
  const stopAt = (xi: number, yi: number) => ok[yi * w + xi]! < 0.5 && cover[(yi + y0) * width + xi + x0]! < 0.5;
  const stop = (x: number, y: number) => {
    const xi = Math.round(x),
      yi = Math.round(y);
    // The picture's own border stops the band as the outline does: the person goes on beyond
    // it (a jersey's dark sleeve left between a coat and the frame was faded, not filled).
    if (xi + x0 < 0 || yi + y0 < 0 || xi + x0 >= width || yi + y0 >= height) return true;
    return xi >= 0 && yi >= 0 && xi < w && yi < h && stopAt(xi, yi);
  };
  // Measured around the stops, not through them: a speck the occluder leaves open inside the
  // head or a forearm is not reached from the garment, so it is no pocket.
  const dg = new Float32Array(w * h);
  const barrier = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const j = y * w + x;
      dg[j] = m[j] ? 0 : Infinity;
      barrier[j] = !m[j] && stopAt(x, y) ? 1 : 0;
    }
  }
  chamfer(dg, w, h, barrier);
  chamfer(dg, w, h, barrier);
  const gap = new Float32Array(w * h).fill(Infinity);
  // The rays' step: half a pixel, or RAY_STEPS to `far` on a large image (the stops are regions
  // many pixels across: the outline, the head, a forearm; at 0.5 px a 3000-px photo's rays took
  // 660 steps each).
  const step = Math.max(0.5, far / RAY_STEPS);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const j = y * w + x;
      const d = dg[j]!;
      if (!(d > 0 && d <= far)) continue;
      if (stop(x, y)) {
        gap[j] = d;
        continue;
      }
      // A stop beside the pixel counts as further from the garment (its distance is not
      // measured); at the window's edge the difference is one-sided.
      const at = (k: number) => (Number.isFinite(dg[k]!) ? dg[k]! : d + 1);
      const gx = (x < w - 1 ? at(j + 1) : d) - (x > 0 ? at(j - 1) : d),
        gy = (y < h - 1 ? at(j + w) : d) - (y > 0 ? at(j - w) : d);
      const len = Math.hypot(gx, gy);
      if (!Number.isFinite(len) || len < 1e-6) continue;
      // Three rays (the gradient and 25 degrees either side of it): a chamfer gradient is coarse.
      for (const turn of FAN) {
        const ux = (gx * turn.c - gy * turn.s) / len,
          uy = (gx * turn.s + gy * turn.c) / len;
        for (let t = step; d + t < gap[j]! && d + t <= far; t += step) {
          if (stop(x + ux * t, y + uy * t)) {
            gap[j] = d + t;
            break;
          }
        }
      }
    }
  }
  return { dg, gap, barrier };
}

/**
 * In place: each pixel's chamfer distance (steps 1 and sqrt 2) to the nearest 0, two passes;
 * `barrier` pixels are never entered (repeat the call to follow paths round them).
 */
export function chamfer(d: Float32Array, w: number, h: number, barrier?: Uint8Array): void {
  const D = Math.SQRT2;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const j = y * w + x;
      if (barrier?.[j]) continue;
      let v = d[j]!;
      if (x > 0) v = Math.min(v, d[j - 1]! + 1);
      if (y > 0) {
        v = Math.min(v, d[j - w]! + 1);
        if (x > 0) v = Math.min(v, d[j - w - 1]! + D);
        if (x < w - 1) v = Math.min(v, d[j - w + 1]! + D);
      }
      d[j] = v;
    }
  }
  for (let y = h - 1; y >= 0; y--) {
    for (let x = w - 1; x >= 0; x--) {
      const j = y * w + x;
      if (barrier?.[j]) continue;
      let v = d[j]!;
      if (x < w - 1) v = Math.min(v, d[j + 1]! + 1);
      if (y < h - 1) {
        v = Math.min(v, d[j + w]! + 1);
        if (x < w - 1) v = Math.min(v, d[j + w + 1]! + D);
        if (x > 0) v = Math.min(v, d[j + w - 1]! + D);
      }
      d[j] = v;
    }
  }
}

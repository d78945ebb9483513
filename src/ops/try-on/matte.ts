import { gaussianBlur, gaussRadius, maskedGaussianBlurLarge } from '../../media/filters.js';
import { bbox, morph, padBox, plane, threshold, type Plane } from './raster.js';

/** The photo the matte reads its edges from (RGB or RGBA bytes). */
export interface MatteGuide {
  data: Uint8Array;
  width: number;
  height: number;
  channels: number;
}

/**
 * What stays in front of the garment (forearms and hands) is drawn from landmark capsules, whose
 * edge is a guess: a blurred capsule laid a hard, round band over the garment, a few pixels
 * wider or narrower than the arm. Near those limbs (`zone`) the capsule's edge band (`r` pixels
 * either side of its 50% line) is re-decided from the photo's own colours: the limb's colour F
 * is the local mean over the capsule's core, the clothing's B over the ring just outside it
 * (normalised Gaussians, sigma 2r), and each band pixel's matte is the projection of its colour
 * on the line B -> F (alpha = (I - B).(F - B) / |F - B|^2, the colour-line model of matting).
 * So the capsule's excess over the clothing falls away, an arm wider than the capsule is taken
 * in, and the edge pixels mixing both get partial alpha (anti-aliased as the photo is). Where F
 * and B are within MIN_CONTRAST levels the photo says nothing and the capsule stays. Wherever
 * `keep` says (the head), the occluder is never lowered.
 *
 * occ: full-size 0..255 occluder; zone: full-size 0/1 where the matte applies; keep: pixels
 * whose occluder may only grow. Returns a new plane (or `occ` itself when the zone is empty).
 */
export function edgeMatte(occ: Plane, guide: MatteGuide, zone: Plane, r: number, keep?: (i: number) => boolean): Plane {
  const { width: w, height: h } = occ;
  const n = w * h;
  let any = false;
  for (let i = 0; i < n && !any; i++) if (zone.data[i] && occ.data[i]! >= 128) any = true;
  if (!any) return occ;
  const e = Math.max(1, Math.round(r));
  // Only the zone's box is re-decided, so only it and what its pixels read are worked on: the
  // ring (2e) and the colours' Gaussian (three box passes, 3 radii) around it, not the whole
  // photo around a hand in front.
  const zb = bbox(zone)!;
  const m = 2 * e + 3 * gaussRadius(2 * e) + 2;
  const { x0, y0, w: cw, h: chh } = padBox(zb, m, w, h);
  const cn = cw * chh;
  const at = (j: number) => (y0 + Math.floor(j / cw)) * w + x0 + (j % cw);
  const sub = plane(cw, chh);
  for (let j = 0; j < cn; j++) sub.data[j] = occ.data[at(j)]!;
  const { core, grown, outer } = edgeBands(sub, e);
  const mF = new Float32Array(cn),
    mB = new Float32Array(cn);
  for (let j = 0; j < cn; j++) {
    mF[j] = core.data[j]!;
    mB[j] = outer.data[j]! && !grown.data[j]! ? 1 : 0;
  }
  const ch = guide.channels;
  const F: Float32Array[] = [],
    B: Float32Array[] = [],
    I: Float32Array[] = [];
  for (let c = 0; c < 3; c++) {
    const v = new Float32Array(cn);
    for (let j = 0; j < cn; j++) v[j] = guide.data[at(j) * ch + Math.min(c, ch - 1)]!;
    I.push(v);
    F.push(maskedGaussianBlurLarge(v, mF, cw, chh, 2 * e));
    B.push(maskedGaussianBlurLarge(v, mB, cw, chh, 2 * e));
  }
  const out = new Uint8Array(occ.data);
  for (let j = 0; j < cn; j++) {
    const i = at(j);
    // The band: within e of the capsule's 50% line, on either side.
    if (!zone.data[i] || !grown.data[j] || core.data[j]) continue;
    let dd = 0,
      dot = 0;
    for (let c = 0; c < 3; c++) {
      const fb = F[c]![j]! - B[c]![j]!;
      dd += fb * fb;
      dot += (I[c]![j]! - B[c]![j]!) * fb;
    }
    if (!(dd >= MIN_CONTRAST * MIN_CONTRAST)) continue; // NaN (no core or ring near) or too little contrast
    const v = Math.round(Math.min(1, Math.max(0, dot / dd)) * 255);
    out[i] = keep?.(i) ? Math.max(out[i]!, v) : v;
  }
  return plane(w, h, out);
}

/**
 * Around a 0..255 plane's 50% line: `core`, its solid part (>= 128) eroded by `e` pixels,
 * `grown`, dilated by `e` (the band between the two is re-decided), and `outer`, dilated by 2e
 * (the ring beyond the band gives the outside's colour).
 */
function edgeBands(p: Plane, e: number): { core: Plane; grown: Plane; outer: Plane } {
  const solid = plane(p.width, p.height);
  for (let i = 0; i < solid.data.length; i++) solid.data[i] = p.data[i]! >= 128 ? 1 : 0;
  return { core: morph(solid, -e), grown: morph(solid, e), outer: morph(solid, 2 * e) };
}

/** Limb and clothing colours closer than this (levels, RGB distance) leave the capsule as it was. */
export const MIN_CONTRAST = 20;

/**
 * A pixel is person from this distance (levels, RGB) from the background's mean, or three of the
 * background's local deviations if more; background below half of it. At 30 the grain of a
 * textured backdrop (grace_hopper.jpg's blue, enlarged) came in as specks along the edge.
 */
const OUTLINE_CONTRAST = 60;

/**
 * The person's outline from the photo: BlazePose's mask (`mask`, full-size 0..255) is its
 * 256-pixel crop scaled up, so its edge lies a pixel or more off the photo's, and the old
 * clothing showed as a line outside it along the garment's edge (messi5.jpg's jersey). In the
 * band of `r` pixels either side of the mask's 50% line, each pixel's alpha is its colour's
 * distance d from the local background (B: the normalised Gaussian mean over the ring just
 * outside the band, sigma 2r) against T, OUTLINE_CONTRAST levels or three local deviations of
 * the background, whichever is more: 0 up to T / 2 (a textured backdrop's grain), rising to 1 at
 * T. A pixel unlike the background beside it is person, whatever its own colour (a striped
 * jersey has no one foreground colour to match). Where no background ring is near, the mask
 * stays. The band's alpha is smoothed (sigma r / 4, at least 0.7 px) against specks, and only
 * ever raises the mask: inside it, a jersey's dark stripe beside a dark background is no less
 * person (lowered, the old stripe showed through the garment's edge). Only the mask's box and
 * 8r around it are worked on. Returns a new full-size 0..255 plane.
 */
export function outlineMatte(mask: Plane, guide: MatteGuide, r: number): Plane {
  const { width: w, height: h } = mask;
  const e = Math.max(1, Math.round(r));
  // Only the mask's box and the reach of the background's mean (8e) around it are read.
  const box = bbox(threshold(mask, 128));
  const out = new Uint8Array(mask.data);
  if (!box) return plane(w, h, out);
  const m = 8 * e;
  const { x0: cx0, y0: cy0, w: cw, h: chh } = padBox(box, m, w, h);
  const ch = guide.channels;
  const sub = plane(cw, chh);
  const rgb = new Uint8Array(cw * chh * 3);
  for (let y = 0; y < chh; y++) {
    for (let x = 0; x < cw; x++) {
      const i = (y + cy0) * w + x + cx0,
        j = y * cw + x;
      sub.data[j] = mask.data[i]!;
      for (let c = 0; c < 3; c++) rgb[j * 3 + c] = guide.data[i * ch + Math.min(c, ch - 1)]!;
    }
  }
  const raised = outlineBand(sub, rgb, e);
  for (let y = 0; y < chh; y++) for (let x = 0; x < cw; x++) out[(y + cy0) * w + x + cx0] = raised[y * cw + x]!;
  return plane(w, h, out);
}

/** outlineMatte on a crop (`rgb`: 3 channels): the raised 0..255 mask. */
function outlineBand(mask: Plane, rgb: Uint8Array, e: number): Uint8Array {
  const { width: w, height: h } = mask;
  const n = w * h;
  const { core, grown, outer } = edgeBands(mask, e);
  const mB = new Float32Array(n);
  for (let i = 0; i < n; i++) mB[i] = outer.data[i]! && !grown.data[i]! ? 1 : 0;
  // Per channel, the squared distance from the background's mean and the background's variance.
  const d2 = new Float32Array(n),
    bVar = new Float32Array(n);
  const v = new Float32Array(n),
    sq = new Float32Array(n);
  for (let c = 0; c < 3; c++) {
    for (let i = 0; i < n; i++) {
      v[i] = rgb[i * 3 + c]!;
      sq[i] = v[i]! * v[i]!;
    }
    const b = maskedGaussianBlurLarge(v, mB, w, h, 2 * e);
    const s2 = maskedGaussianBlurLarge(sq, mB, w, h, 2 * e);
    for (let i = 0; i < n; i++) {
      d2[i] = d2[i]! + (v[i]! - b[i]!) ** 2;
      bVar[i] = bVar[i]! + Math.max(0, s2[i]! - b[i]! * b[i]!);
    }
  }
  const a = new Float32Array(n);
  const band = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    a[i] = mask.data[i]! / 255;
    if (!grown.data[i] || core.data[i]) continue;
    if (!(d2[i]! >= 0)) continue; // no background ring near: NaN
    band[i] = 1;
    const t = Math.max(OUTLINE_CONTRAST, 3 * Math.sqrt(bVar[i]!));
    a[i] = Math.min(1, Math.max(0, 2 * (Math.sqrt(d2[i]!) / t - 0.5)));
  }
  const soft = gaussianBlur(a, w, h, Math.max(0.7, e / 4));
  const out = new Uint8Array(mask.data);
  for (let i = 0; i < n; i++) if (band[i]) out[i] = Math.max(out[i]!, Math.round(Math.min(1, Math.max(0, soft[i]!)) * 255));
  return out;
}

import { maskedGaussianBlurLarge } from '../../media/filters.js';
import { maskedBlurRgb, morph, padBox, plane } from './raster.js';

/** The garment's outer edge reaches this far (shoulder widths, at least 2 px) into the pixels that mix the old clothing with the backdrop: about one pixel of BlazePose's 256-pixel mask, whose edge lies that far off the photo's (at 0.025 the correction laid patches over grace_hopper.jpg's flag, where the mask takes in backdrop). */
const EDGE_REACH = 0.01;
/** The outline is taken back to the photo's edge this many times EDGE_REACH deep at most: BlazePose's mask reaches past the photo's edge by more than its usual pixel in a concave corner (the neck's side above the shoulder), which its 256-pixel crop rounds off. */
const OVERSHOOT = 2;
/** Where the clothing and the backdrop differ less than this (RGB distance), nothing is told apart. */
const MIN_CONTRAST = 30;
/** The outline is only taken back where they differ by this much: between the astronaut's dark red side in shadow and the black helmet beside it, each pixel's share was noise, and the garment's edge was cut into by a jagged black sliver. */
const TAKE_BACK_CONTRAST = 60;
/** Nor where they differ by less than this many deviations of the backdrop beside (a textured backdrop, a flag's stripes: its mean is no one pixel's colour, and grace_hopper.jpg's dress was taken back beside the flag and its gold pole in notches and orange specks). */
const TEXTURE = 3;
/** A pixel further off the backdrop-clothing line than this share of their distance is not a mix of the two. */
const MIX_FIT = 0.35;
/** The old clothing's colour is only judged where this much of the Gaussian's weight lies under the garment. */
const CLOTHING_NEAR = 0.05;
/** The backdrop's colour there: a normalised Gaussian of the backdrop beyond the edge, sigma in shoulder widths (at least 1.5 px). */
const BACKDROP_SIGMA = 0.03;

/**
 * The garment's outer edge over the backdrop, not over the old clothing's own edge. Along the
 * person's outline the photo's pixels mix the old clothing with the backdrop (and BlazePose's
 * mask lies a pixel or two inside the photo's edge), so the garment, drawn over them with the
 * outline's partial alpha, left a thin line of the old clothing round its edge (messi5.jpg: a
 * blue line of jersey along the t-shirt's shoulder tops).
 *
 * Where the person's outline is not full (`inPerson` < 1) within EDGE_REACH of the drawn garment
 * (`cover` >= 0.5), the old clothing is taken out of what the render still shows of the photo
 * (1 - cover of it), as a matte would: the pixel's colour is projected on the line from the
 * backdrop beside it (a normalised Gaussian of the pixels outside the outline, `inPerson` <=
 * 0.02, beyond the reach) to the clothing beside it (one of the photo's pixels inside the outline
 * under the garment, sigma the reach), and that share of the clothing's colour is replaced
 * by the backdrop's. A pixel of the backdrop itself projects to 0 and keeps its detail (a
 * smoothed backdrop laid over the whole reach smeared grace_hopper.jpg's flag and pole along the
 * dress's edge), and so does one the mix does not explain (further off the line than MIX_FIT of
 * its length: the backdrop's own detail, hair); where no clothing lies under the garment nearby
 * (a neck beside a strap), or clothing and backdrop are alike (MIN_CONTRAST), nothing changes.
 *
 * BlazePose's mask also reaches past the photo's edge (most in the concave corner between neck
 * and shoulder), where the outline is full and the garment stood over the backdrop in the mask's
 * stair-stepped edge (issue 35, round 20). So the pixels the garment holds are also reached from
 * outside the outline (up to OVERSHOOT x EDGE_REACH deep, on through pixels mostly backdrop) and
 * judged the same way, where clothing and backdrop differ by TAKE_BACK_CONTRAST and by TEXTURE
 * deviations of the backdrop beside: the garment keeps the clothing's share of each and the rest
 * is the backdrop, so its edge follows the photo's, anti-aliased as the photo is. The clothing's
 * colour is read beyond the outline's outer reach and not from pixels like the backdrop (the
 * overshoot mixed backdrop into it). `base` is the image the garment was drawn over; `out` is
 * changed in place.
 */
export function backdropAtEdge(
  out: Uint8Array,
  base: Uint8Array,
  cover: Float32Array,
  inPerson: Float32Array,
  shoulderW: number,
  width: number,
  height: number,
  box: { x: number; y: number; width: number; height: number },
): void {
  const reach = Math.max(2, Math.round(EDGE_REACH * shoulderW));
  const sigma = Math.max(1.5, BACKDROP_SIGMA * shoulderW);
  const pad = reach + Math.ceil(3 * sigma);
  const { x0, y0, w, h } = padBox({ x0: box.x, y0: box.y, x1: box.x + box.width - 1, y1: box.y + box.height - 1 }, pad, width, height);
  if (w < 2 || h < 2) return;
  const at = (j: number) => (Math.floor(j / w) + y0) * width + (j % w) + x0;
  // Within `reach` of the drawn garment (chessboard distance).
  const drawn = new Uint8Array(w * h);
  for (let j = 0; j < w * h; j++) if (cover[at(j)]! >= 0.5) drawn[j] = 1;
  const near = morph(plane(w, h, drawn), reach).data;
  // The backdrop: outside the outline, beyond the reach. The old clothing: inside the outline
  // under the garment, near the edge.
  const bgWeight = new Float32Array(w * h),
    fgWeight = new Float32Array(w * h);
  let any = false;
  for (let j = 0; j < w * h; j++) {
    const i = at(j);
    if (!near[j] && inPerson[i]! <= 0.02) bgWeight[j] = 1;
    if (near[j] && inPerson[i]! < 1) any = true;
  }
  if (!any) return;
  const bg = maskedBlurRgb(base, width, x0, y0, w, h, bgWeight, sigma);
  // The backdrop's own spread there (its pixels' variance about that mean, summed over the
  // channels: the mean of their squared norms less the mean's).
  const norm2 = new Float32Array(w * h);
  for (let j = 0; j < w * h; j++) for (let c = 0; c < 3; c++) norm2[j] = norm2[j]! + base[at(j) * 3 + c]! ** 2;
  const spread = maskedGaussianBlurLarge(norm2, bgWeight, w, h, sigma);
  for (let j = 0; j < w * h; j++) spread[j] = Math.max(0, spread[j]! - (bg[0]![j]! ** 2 + bg[1]![j]! ** 2 + bg[2]![j]! ** 2));
  // Within MIN_CONTRAST of the backdrop's colour (not NaN: a backdrop lies near).
  const likeBackdrop = (j: number, i: number) => {
    let dist = 0;
    for (let c = 0; c < 3; c++) dist += (base[i * 3 + c]! - bg[c]![j]!) ** 2;
    return dist < MIN_CONTRAST * MIN_CONTRAST;
  };
  // The clothing: not the outline's outer `reach` (BlazePose's mask takes in backdrop there), and
  // not a pixel as close to the backdrop as MIN_CONTRAST.
  const outside = new Uint8Array(w * h);
  for (let j = 0; j < w * h; j++) if (inPerson[at(j)]! < 0.5) outside[j] = 1;
  const rim = morph(plane(w, h, outside), reach).data;
  for (let j = 0; j < w * h; j++) {
    const i = at(j);
    if (!rim[j] && inPerson[i]! >= 1 && cover[i]! >= 0.5 && !likeBackdrop(j, i)) fgWeight[j] = 1;
  }
  const fg = maskedBlurRgb(base, width, x0, y0, w, h, fgWeight, reach, CLOTHING_NEAR);
  // How much of the old clothing pixel j holds: its colour projected on the line from the
  // backdrop to the clothing beside it (0: backdrop, 1: clothing), as a matte would say; null
  // where the two are alike or the mix does not explain the pixel (far off the line it is
  // something else: the backdrop's own detail, hair).
  const mix = (j: number, i: number, contrast = MIN_CONTRAST): { alpha: number; d: number[] } | null => {
    const d = [0, 0, 0],
      e = [0, 0, 0];
    let dd = 0,
      ed = 0;
    for (let c = 0; c < 3; c++) {
      const f = fg[c]![j]!,
        b = bg[c]![j]!;
      if (Number.isNaN(f) || Number.isNaN(b)) return null;
      d[c] = f - b;
      e[c] = base[i * 3 + c]! - b;
      dd += d[c]! * d[c]!;
      ed += e[c]! * d[c]!;
    }
    if (dd < contrast * contrast) return null;
    const alpha = Math.min(1, Math.max(0, ed / dd));
    let off = 0;
    for (let c = 0; c < 3; c++) off += (e[c]! - alpha * d[c]!) ** 2;
    return off > MIX_FIT * MIX_FIT * dd ? null : { alpha, d };
  };
  for (let j = 0; j < w * h; j++) {
    if (!near[j]) continue;
    const i = at(j);
    const left = 1 - cover[i]!;
    if (inPerson[i]! >= 1 || left <= 0) continue;
    // That share of the clothing's colour is replaced by the backdrop's in what the render still
    // shows of the photo. A pixel of the backdrop itself projects to 0 and keeps its detail.
    const m = mix(j, i);
    if (!m || m.alpha <= 0) continue;
    for (let c = 0; c < 3; c++) out[i * 3 + c] = Math.round(Math.min(255, Math.max(0, out[i * 3 + c]! - left * m.alpha * m.d[c]!)));
  }
  // The pixels the garment holds (cover >= 0.5) reached from outside the outline through the
  // backdrop: 4-neighbour steps, up to OVERSHOOT x `reach`, on from a pixel that is mostly
  // backdrop. Each one's mix is kept (`share`: NaN where the mix does not explain it).
  const depth = new Int32Array(w * h).fill(-1);
  const share = new Float32Array(w * h).fill(Number.NaN);
  const queue: number[] = [];
  for (let j = 0; j < w * h; j++) {
    if (near[j] && inPerson[at(j)]! < 0.5 && cover[at(j)]! < 0.5) {
      depth[j] = 0;
      queue.push(j);
    }
  }
  const neighbours = (j: number) => {
    const x = j % w,
      y = (j - x) / w;
    return STEPS.map(([dx, dy]) => (x + dx < 0 || y + dy < 0 || x + dx >= w || y + dy >= h ? -1 : (y + dy) * w + x + dx)).filter((k) => k >= 0);
  };
  for (let q = 0; q < queue.length; q++) {
    const j = queue[q]!;
    if (depth[j]! > 0) {
      const m = mix(j, at(j), Math.max(TAKE_BACK_CONTRAST, TEXTURE * Math.sqrt(spread[j]!)));
      if (!m) continue;
      share[j] = m.alpha;
      if (m.alpha >= 0.5 || depth[j]! >= OVERSHOOT * reach) continue;
    }
    for (const k of neighbours(j)) {
      if (depth[k]! >= 0 || !near[k] || cover[at(k)]! < 0.5) continue;
      depth[k] = depth[j]! + 1;
      queue.push(k);
    }
  }
  for (const j of queue) {
    const i = at(j);
    if (!(depth[j]! > 0)) continue;
    let alpha = share[j]!;
    // One the mix cannot judge (no clothing near enough to judge by) that looks like the
    // backdrop, between pixels of the backdrop (two or more of its four neighbours), is backdrop:
    // else it stood as a speck of garment on the backdrop. Not by its colour alone: where the
    // outline cuts dark clothing off, the "backdrop" beside it is that clothing.
    if (Number.isNaN(alpha)) {
      const backdrop = neighbours(j).filter((k) => share[k]! < 0.5).length;
      if (backdrop < 2 || !likeBackdrop(j, i)) continue;
      alpha = 0;
    }
    if (alpha >= 1) continue;
    // The garment keeps the clothing's share of the pixel; the rest is the backdrop: the
    // photo with the clothing's share of it taken out.
    for (let c = 0; c < 3; c++) {
      const back = base[i * 3 + c]! - alpha * (fg[c]![j]! - bg[c]![j]!);
      out[i * 3 + c] = Math.round(Math.min(255, Math.max(0, alpha * out[i * 3 + c]! + (1 - alpha) * (Number.isNaN(back) ? base[i * 3 + c]! : back))));
    }
  }
}

const STEPS = [
  [1, 0],
  [-1, 0],
  [0, 1],
  [0, -1],
] as const;

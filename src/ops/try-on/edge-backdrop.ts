import { maskedBlurRgb, morph, plane } from './raster.js';

/** The garment's outer edge reaches this far (shoulder widths, at least 2 px) into the pixels that mix the old clothing with the backdrop: about one pixel of BlazePose's 256-pixel mask, whose edge lies that far off the photo's (at 0.025 the correction laid patches over grace_hopper.jpg's flag, where the mask takes in backdrop). */
const EDGE_REACH = 0.01;
/** Where the clothing and the backdrop differ less than this (RGB distance), nothing is told apart. */
const MIN_CONTRAST = 30;
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
 * (a neck beside a strap), or clothing and backdrop are alike (MIN_CONTRAST), nothing changes. `base` is the image the
 * garment was drawn over; `out` is changed in place.
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
  const x0 = Math.max(0, box.x - pad),
    y0 = Math.max(0, box.y - pad),
    x1 = Math.min(width - 1, box.x + box.width - 1 + pad),
    y1 = Math.min(height - 1, box.y + box.height - 1 + pad);
  const w = x1 - x0 + 1,
    h = y1 - y0 + 1;
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
    if (inPerson[i]! >= 1 && cover[i]! >= 0.5) fgWeight[j] = 1;
    if (near[j] && inPerson[i]! < 1 && cover[i]! < 1) any = true;
  }
  if (!any) return;
  const bg = maskedBlurRgb(base, width, x0, y0, w, h, bgWeight, sigma);
  const fg = maskedBlurRgb(base, width, x0, y0, w, h, fgWeight, reach, CLOTHING_NEAR);
  for (let j = 0; j < w * h; j++) {
    if (!near[j]) continue;
    const i = at(j);
    const left = 1 - cover[i]!;
    if (inPerson[i]! >= 1 || left <= 0) continue;
    // How much of the old clothing the pixel holds: its colour projected on the line from the
    // backdrop to the clothing beside it (0: backdrop, 1: clothing), as a matte would say.
    const d = [0, 0, 0],
      e = [0, 0, 0];
    let dd = 0,
      ed = 0,
      ok = true;
    for (let c = 0; c < 3; c++) {
      const f = fg[c]![j]!,
        b = bg[c]![j]!;
      if (Number.isNaN(f) || Number.isNaN(b)) ok = false;
      d[c] = f - b;
      e[c] = base[i * 3 + c]! - b;
      dd += d[c]! * d[c]!;
      ed += e[c]! * d[c]!;
    }
    if (!ok || dd < MIN_CONTRAST * MIN_CONTRAST) continue;
    const alpha = Math.min(1, Math.max(0, ed / dd));
    if (alpha <= 0) continue;
    // Only a pixel the mix explains: far off the line it is something else (the backdrop's own
    // detail, hair), and left alone.
    let off = 0;
    for (let c = 0; c < 3; c++) off += (e[c]! - alpha * d[c]!) ** 2;
    if (off > MIX_FIT * MIX_FIT * dd) continue;
    for (let c = 0; c < 3; c++) out[i * 3 + c] = Math.round(Math.min(255, Math.max(0, out[i * 3 + c]! - left * alpha * d[c]!)));
  }
}

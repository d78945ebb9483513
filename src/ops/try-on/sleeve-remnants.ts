import type { BodyGeometry } from './body.js';
import { maskedBlurRgb, morph, padBox, plane } from './raster.js';
import { ARM_HALF, along, armBox, type ShortSleeve } from './short-sleeves.js';
import { chroma } from './skin.js';

/** The zone searched around the arm's bone line, in shoulder widths: out to here either side, */
const ZONE_HALF = 0.32;
/** from this share of the upper arm down, to this far past the sleeve's end. */
const ZONE_FROM = 0.5;
const ZONE_PAST = 0.25;
/** The sleeve's colours are sampled inside the outline up to this far past its end (its cuff), in shoulder widths. */
const PALETTE_PAST = 0.05;
/** At most this many palette samples per sleeve. */
const PALETTE_MAX = 400;
/** A pixel within this RGB distance of a palette sample has the sleeve's colour. */
const PALETTE_NEAR = 30;
/** Only a coloured pixel is judged (the largest less the smallest channel at least this): dark and grey ones, a sleeve's shadowed inside as much as a dim backdrop, are too alike to tell apart. */
const COLOURED = 40;
/** A pixel this far (CbCr) from the arm's skin colour, or further, is not its skin. */
const NOT_SKIN = 18;
/** The background's colour: a normalised Gaussian of the background beside it, sigma in shoulder widths. */
const FILL_SIGMA = 0.05;

/**
 * Full-size 0..1: the photo's short sleeves where they lie just outside the person's outline
 * (`inPerson` < 0.5), to be covered by the background beside them (`fillRemnants`). BlazePose's
 * mask follows the arm, not a loose sleeve: messi5.jpg's jersey sleeve opening hangs below his
 * raised left arm, a yellow cuff and the sleeve's black inside, outside the mask, so neither the
 * new garment nor the fill band reached it and it showed under every garment's sleeve.
 *
 * Per short sleeve (short-sleeves.ts), the zone is ZONE_HALF shoulder widths either side of the
 * bone line, from ZONE_FROM of the upper arm down to ZONE_PAST past the sleeve's end. The
 * sleeve's colours are sampled inside the outline (ARM_HALF of the bone line, up to PALETTE_PAST
 * past its end, coloured and not the arm's skin colour). A pixel of the zone outside the outline
 * is remnant when it is coloured (COLOURED), not the arm's skin colour (NOT_SKIN), has one of the
 * sleeve's colours (PALETTE_NEAR), and joins the outline through other such pixels: what of the backdrop shares a colour with the
 * sleeve but lies apart from the person is left alone. Null when nothing is found.
 */
export function sleeveRemnants(
  rgb: Uint8Array,
  channels: number,
  body: BodyGeometry,
  sleeves: readonly ShortSleeve[],
  k: number,
  inPerson: Float32Array,
  width: number,
  height: number,
): Uint8Array | null {
  const sw = body.shoulderW * k;
  const found = new Uint8Array(width * height);
  let any = false;
  for (const { segs, end, skin } of sleeves) {
    const [cb0, cr0] = chroma(skin.rgb[0], skin.rgb[1], skin.rgb[2]);
    // Coloured, and not the arm's skin colour.
    const sleeveLike = (i: number) => {
      const r = rgb[i * channels]!,
        g = rgb[i * channels + 1]!,
        b = rgb[i * channels + 2]!;
      if (Math.max(r, g, b) - Math.min(r, g, b) < COLOURED) return false;
      const [cb, cr] = chroma(r, g, b);
      return Math.hypot(cb - cb0, cr - cr0) >= NOT_SKIN;
    };
    const from = ZONE_FROM * segs[0]!.len;
    const box = armBox(segs, ZONE_HALF * sw, width, height);
    const palette: number[] = [];
    const zone: number[] = [];
    for (let y = box.y0; y <= box.y1; y++) {
      for (let x = box.x0; x <= box.x1; x++) {
        const { s, d } = along(segs, x + 0.5, y + 0.5);
        if (s < from || s > end + ZONE_PAST * sw || d > ZONE_HALF * sw) continue;
        const i = y * width + x;
        if (inPerson[i]! >= 1) {
          if (d <= ARM_HALF * sw && s <= end + PALETTE_PAST * sw && sleeveLike(i)) palette.push(i);
        } else if (inPerson[i]! < 0.5 && sleeveLike(i)) {
          zone.push(i);
        }
      }
    }
    if (!palette.length || !zone.length) continue;
    const step = Math.max(1, Math.ceil(palette.length / PALETTE_MAX));
    const cols: number[] = [];
    for (let j = 0; j < palette.length; j += step) {
      const i = palette[j]! * channels;
      cols.push(rgb[i]!, rgb[i + 1]!, rgb[i + 2]!);
    }
    const near2 = PALETTE_NEAR * PALETTE_NEAR;
    const candidate = new Uint8Array(width * height);
    for (const i of zone) {
      const r = rgb[i * channels]!,
        g = rgb[i * channels + 1]!,
        b = rgb[i * channels + 2]!;
      for (let c = 0; c < cols.length; c += 3) {
        if ((r - cols[c]!) ** 2 + (g - cols[c + 1]!) ** 2 + (b - cols[c + 2]!) ** 2 <= near2) {
          candidate[i] = 1;
          break;
        }
      }
    }
    // Joined to the outline: flood from candidates beside a pixel inside it.
    const stack: number[] = [];
    const inside = (j: number) => inPerson[j]! >= 0.5;
    for (const i of zone) {
      if (!candidate[i]) continue;
      const x = i % width;
      if (
        (x > 0 && inside(i - 1)) ||
        (x < width - 1 && inside(i + 1)) ||
        (i >= width && inside(i - width)) ||
        (i + width < width * height && inside(i + width))
      ) {
        candidate[i] = 2;
        stack.push(i);
      }
    }
    while (stack.length) {
      const i = stack.pop()!;
      found[i] = 1;
      any = true;
      const x = i % width;
      for (const j of [x > 0 ? i - 1 : -1, x < width - 1 ? i + 1 : -1, i - width, i + width]) {
        if (j < 0 || j >= width * height || candidate[j] !== 1) continue;
        candidate[j] = 2;
        stack.push(j);
      }
    }
  }
  return any ? found : null;
}

/**
 * Covers the remnants in `out` (RGB, full size) with the background beside them: a normalised
 * Gaussian (FILL_SIGMA shoulder widths) of the pixels outside the outline (`inPerson` <= 0.05)
 * that are not remnant, blended in over the remnants grown by a pixel and softened (3x3 box),
 * so no edge is left where they were.
 */
export function fillRemnants(out: Uint8Array, found: Uint8Array, inPerson: Float32Array, shoulderW: number, width: number, height: number): void {
  let x0 = width,
    y0 = height,
    x1 = -1,
    y1 = -1;
  for (let i = 0; i < found.length; i++) {
    if (!found[i]) continue;
    const x = i % width,
      y = (i - x) / width;
    x0 = Math.min(x0, x);
    x1 = Math.max(x1, x);
    y0 = Math.min(y0, y);
    y1 = Math.max(y1, y);
  }
  if (x1 < 0) return;
  const sigma = Math.max(1, FILL_SIGMA * shoulderW);
  const pad = Math.ceil(3 * sigma) + 2;
  const { x0: bx0, y0: by0, w, h } = padBox({ x0, y0, x1, y1 }, pad, width, height);
  const at = (x: number, y: number) => (y + by0) * width + x + bx0;
  // The remnants grown by a pixel: the fill's reach, and what the background may not be taken from.
  const inBox = new Uint8Array(w * h);
  for (let i = 0; i < w * h; i++) inBox[i] = found[at(i % w, Math.floor(i / w))]!;
  const grown = morph(plane(w, h, inBox), 1).data;
  const weight = new Float32Array(w * h);
  for (let i = 0; i < w * h; i++) {
    const x = i % w,
      y = (i - x) / w;
    weight[i] = !grown[i] && inPerson[at(x, y)]! <= 0.05 ? 1 : 0;
  }
  const fills = maskedBlurRgb(out, width, bx0, by0, w, h, weight, sigma);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      // Softened: the grown remnants' 3x3 mean, outside the outline only.
      let a = 0;
      for (let dy = -1; dy <= 1; dy++) {
        for (let dx = -1; dx <= 1; dx++) {
          const xx = Math.min(w - 1, Math.max(0, x + dx)),
            yy = Math.min(h - 1, Math.max(0, y + dy));
          a += grown[yy * w + xx]!;
        }
      }
      a = (a / 9) * (1 - inPerson[at(x, y)]!);
      if (a <= 0) continue;
      const p = at(x, y);
      for (let c = 0; c < 3; c++) {
        const f = fills[c]![y * w + x]!;
        if (Number.isNaN(f)) continue;
        out[p * 3 + c] = Math.round(out[p * 3 + c]! * (1 - a) + f * a);
      }
    }
  }
}

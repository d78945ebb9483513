import type { BodyGeometry } from './body.js';
import { ARM_HALF, along, armBox, chroma, median, type ShortSleeve } from './short-sleeves.js';

/** Past the old sleeve's end, its cuff and hanging opening are looked for this far along the arm and this far either side of the bone line, in shoulder widths. */
const CUFF = 0.25;
const CUFF_HALF = 0.24;
/** Past the end, a pixel this far (CbCr) from the arm's skin colour is painted fully, half as far not at all. */
const SKIN_NEAR = 12;
/** The wider zone starts this far down the upper arm (a share of its length). */
const LOOSE_FROM = 0.5;

/** An arm repainted bare: full-size 0..1 weight of the painted skin and its colour per pixel. */
export interface BareArm {
  /** 0..1 per full-size pixel (0 outside the painted arm). */
  weight: Float32Array;
  /** The photo's RGB of the arm's bare skin, under `shadeRef`. */
  albedo: [number, number, number];
  /** The scene's shading ratio the albedo was taken under (the sample's median). */
  shadeRef: number;
}

/**
 * Bare arms under a sleeveless garment (the strapped dress): the photo's own sleeves, which the
 * garment does not cover and which stayed in front of it with the arms (messi5.jpg's red and
 * blue jersey sleeves beside the dress's straps), repainted as the arm's own skin.
 *
 * Per short sleeve (short-sleeves.ts: where the photo's sleeve ends, the arm bare past it), the
 * arm's colour is the median of the skin pixels in the bare arm just past that end (SAMPLE
 * shoulder widths), taken with the photo's shading there; the painted skin is that colour under
 * the scene's shading (shade.ts: the old sleeve's light and folds without its stripes), from the
 * shoulder to the sleeve's end within ARM_HALF shoulder widths of the bone line and the person's
 * outline. From LOOSE_FROM of the upper arm to CUFF past the end, within CUFF_HALF, what is not
 * the arm's skin colour is painted too: the end is oblique, a loose sleeve stands off the arm,
 * and the colour rule takes a yellow cuff for skin. An arm with too little skin to sample is left
 * as it is, as are long sleeves (the render then shows the old sleeve).
 *
 * `shade` is the full-size shading ratio; `inPerson` the full-size 0..1 outline. Returns the arms
 * painted, for the caller to blend under the garment.
 */
export function bareArms(
  rgb: Uint8Array,
  channels: number,
  body: BodyGeometry,
  sleeves: readonly ShortSleeve[],
  k: number,
  shade: Float32Array,
  inPerson: Float32Array,
  width: number,
  height: number,
): BareArm[] {
  const sw = body.shoulderW * k;
  const out: BareArm[] = [];
  for (const { segs, end, skin } of sleeves) {
    const half = ARM_HALF * sw,
      wide = CUFF_HALF * sw;
    const box = armBox(segs, wide, width, height);
    const albedo = skin.rgb;
    const [cb0, cr0] = chroma(albedo[0], albedo[1], albedo[2]);
    // Up to the end every pixel of the arm is sleeve; past it (the end is oblique, and a loose
    // sleeve's opening hangs below the arm) only what is not the arm's skin colour, fading out.
    const cuff = CUFF * sw;
    // A loose sleeve stands off the arm from half way down the upper arm (nearer the shoulder
    // the wider zone would reach the hair and the torso beside the neck).
    const loose = LOOSE_FROM * segs[0]!.len;
    const weight = new Float32Array(width * height);
    for (let y = box.y0; y <= box.y1; y++) {
      for (let x = box.x0; x <= box.x1; x++) {
        const i = y * width + x;
        const ip = inPerson[i]!;
        if (ip <= 0) continue;
        const { s, d } = along(segs, x + 0.5, y + 0.5);
        let t: number;
        if (s <= end && d <= half) {
          t = 1;
        } else {
          if (d > wide || s > end + cuff || s < loose) continue;
          const [cb, cr] = chroma(rgb[i * channels]!, rgb[i * channels + 1]!, rgb[i * channels + 2]!);
          const far = Math.min(1, Math.max(0, (Math.hypot(cb - cb0, cr - cr0) - SKIN_NEAR) / SKIN_NEAR));
          t = far * Math.min(1, (end + cuff - s) / (0.25 * cuff));
        }
        if (t <= 0) continue;
        weight[i] = ip * t * t * (3 - 2 * t);
      }
    }
    out.push({ weight, albedo, shadeRef: Math.max(0.2, median(skin.at.map((i) => shade[i]!))) });
  }
  return out;
}

/** Paints the arms into `out` (RGB, full size): each arm's albedo under the shading, blended by its weight. */
export function paintBareArms(out: Uint8Array, arms: readonly BareArm[], shade: Float32Array): void {
  for (const arm of arms) {
    const { weight: wgt, albedo, shadeRef } = arm;
    for (let i = 0; i < wgt.length; i++) {
      const a = wgt[i]!;
      if (a <= 0) continue;
      const r = shade[i]! / shadeRef;
      for (let c = 0; c < 3; c++) out[i * 3 + c] = Math.round(out[i * 3 + c]! * (1 - a) + Math.min(255, albedo[c]! * r) * a);
    }
  }
}

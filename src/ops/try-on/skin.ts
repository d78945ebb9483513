import { plane, type Plane } from './raster.js';

/**
 * Skin-tone detection: the RGB rule of Kovac et al. (2003) intersected with the YCbCr box of
 * Chai & Ngan (1999). Either rule alone passes saturated oranges and browns (an orange suit,
 * a tan leather garment); the intersection keeps lit skin of most tones and rejects them.
 * It is a colour rule, not a detector: beige and peach fabrics still pass (documented limit).
 */
function isSkin(r: number, g: number, b: number): boolean {
  const max = r > g ? (r > b ? r : b) : g > b ? g : b;
  const min = r < g ? (r < b ? r : b) : g < b ? g : b;
  if (!(r > 95 && g > 40 && b > 20 && max - min > 15 && Math.abs(r - g) > 15 && r > g && r > b)) return false;
  const cb = 128 - 0.168736 * r - 0.331264 * g + 0.5 * b;
  const cr = 128 + 0.5 * r - 0.418688 * g - 0.081312 * b;
  return cb >= 77 && cb <= 127 && cr >= 135 && cr <= 173;
}

/** BT.601 chroma (Cb, Cr, offset 128) of an RGB colour, for the skin-colour distances (isSkin computes the same inline, per pixel of every skin map). */
export function chroma(r: number, g: number, b: number): [number, number] {
  return [128 - 0.168736 * r - 0.331264 * g + 0.5 * b, 128 + 0.5 * r - 0.418688 * g - 0.081312 * b];
}

/** 0/1 skin plane, restricted to `within` (0/1) when given. */
export function skinMask(data: Uint8Array, width: number, height: number, channels: number, within?: Plane): Plane {
  const out = new Uint8Array(width * height);
  for (let i = 0, j = 0; i < out.length; i++, j += channels) {
    if (within && !within.data[i]) continue;
    out[i] = isSkin(data[j]!, data[j + 1]!, data[j + 2]!) ? 1 : 0;
  }
  return plane(width, height, out);
}

/** Largest CbCr distance from the face's median that still counts as the same skin. */
const FACE_SKIN_TOL = 15;

/**
 * The skin map with, inside `zone`, only the face's own skin kept: pixels whose chroma (Cb, Cr)
 * lies more than FACE_SKIN_TOL from the median of the face's skin (`sample`: at least 50
 * pixels, else the map is returned as it is) are taken out. The colour rule passes yellow and
 * orange cloth; beside a face it took a football jersey's collar trim for the neck
 * (messi5.jpg), which then stayed in front of the new garment. A neck in shadow keeps the
 * face's chroma.
 */
export function faceSkinOnly(rgb: Uint8Array, skin: Plane, sample: (i: number) => boolean, zone: (x: number, y: number) => boolean): Plane {
  const { width: w, height: h } = skin;
  const cbs: number[] = [],
    crs: number[] = [];
  const chromaAt = (i: number) => chroma(rgb[i * 3]!, rgb[i * 3 + 1]!, rgb[i * 3 + 2]!);
  for (let i = 0; i < w * h; i++) {
    if (!skin.data[i] || !sample(i)) continue;
    const [cb, cr] = chromaAt(i);
    cbs.push(cb);
    crs.push(cr);
  }
  if (cbs.length < 50) return skin;
  const mid = (v: number[]) => v.sort((a, b) => a - b)[v.length >> 1]!;
  const cb0 = mid(cbs),
    cr0 = mid(crs);
  const out = new Uint8Array(skin.data);
  for (let i = 0; i < w * h; i++) {
    if (!out[i]) continue;
    const x = i % w;
    if (!zone(x, (i - x) / w)) continue;
    const [cb, cr] = chromaAt(i);
    if (Math.hypot(cb - cb0, cr - cr0) > FACE_SKIN_TOL) out[i] = 0;
  }
  return plane(w, h, out);
}

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

/** 0/1 skin plane, restricted to `within` (0/1) when given. */
export function skinMask(data: Uint8Array, width: number, height: number, channels: number, within?: Plane): Plane {
  const out = new Uint8Array(width * height);
  for (let i = 0, j = 0; i < out.length; i++, j += channels) {
    if (within && !within.data[i]) continue;
    out[i] = isSkin(data[j]!, data[j + 1]!, data[j + 2]!) ? 1 : 0;
  }
  return plane(width, height, out);
}

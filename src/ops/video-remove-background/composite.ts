/**
 * Frame compositing with a matte, one pass per pixel. Output buffers are reused across frames
 * (pass `out`), so a long clip allocates nothing per frame here.
 */

export type Rgb = readonly [number, number, number];

/** "#RGB" or "#RRGGBB" -> [r, g, b]. */
export function parseColor(hex: string): Rgb {
  let h = hex.replace(/^#/, '');
  if (h.length === 3) h = h.replace(/./g, (c) => c + c);
  const v = Number.parseInt(h, 16);
  return [(v >> 16) & 255, (v >> 8) & 255, v & 255];
}

/** RGB over a solid colour: out = fg * a + bg * (1 - a), rounded. */
export function compositeOver(rgb: Uint8Array, matte: Uint8Array, bg: Rgb, out: Buffer): Buffer {
  const [br, bgc, bb] = bg;
  const n = matte.length;
  for (let i = 0, j = 0; i < n; i++, j += 3) {
    const a = matte[i]!;
    if (a === 255) {
      out[j] = rgb[j]!;
      out[j + 1] = rgb[j + 1]!;
      out[j + 2] = rgb[j + 2]!;
    } else if (a === 0) {
      out[j] = br;
      out[j + 1] = bgc;
      out[j + 2] = bb;
    } else {
      const ia = 255 - a;
      // (x + 127) / 255 rounds; the multiply-shift form is exact for 0..65025.
      out[j] = ((rgb[j]! * a + br * ia + 127) * 257) >>> 16;
      out[j + 1] = ((rgb[j + 1]! * a + bgc * ia + 127) * 257) >>> 16;
      out[j + 2] = ((rgb[j + 2]! * a + bb * ia + 127) * 257) >>> 16;
    }
  }
  return out;
}

/**
 * RGB + matte -> RGBA with straight alpha. Fully transparent pixels get black so encoders do
 * not spend bits on colour nobody sees.
 */
export function attachAlpha(rgb: Uint8Array, matte: Uint8Array, out: Buffer): Buffer {
  const n = matte.length;
  for (let i = 0, j = 0, k = 0; i < n; i++, j += 3, k += 4) {
    const a = matte[i]!;
    if (a === 0) {
      out[k] = 0;
      out[k + 1] = 0;
      out[k + 2] = 0;
    } else {
      out[k] = rgb[j]!;
      out[k + 1] = rgb[j + 1]!;
      out[k + 2] = rgb[j + 2]!;
    }
    out[k + 3] = a;
  }
  return out;
}

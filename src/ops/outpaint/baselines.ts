import sharp from 'sharp';
import type { Margins } from './pyramid.js';

/**
 * The simple fills outpaint is measured against: edge replicate, mirror (libvips' mirror
 * extend, as `sharp().extend({extendWith:'mirror'})`) and blur-extend (the mirror fill blurred
 * in proportion to the band, original pasted back). All return an RGB canvas.
 */
export type Baseline = 'replicate' | 'mirror' | 'blur-extend';

export async function baselineFill(rgb: Uint8Array, width: number, height: number, m: Margins, kind: Baseline): Promise<Uint8Array> {
  const raw = { width, height, channels: 3 as const };
  const ext = { ...m, extendWith: kind === 'replicate' ? ('copy' as const) : ('mirror' as const) };
  let out = await sharp(Buffer.from(rgb), { raw }).extend(ext).raw().toBuffer();
  if (kind === 'blur-extend') {
    const w = width + m.left + m.right;
    const h = height + m.top + m.bottom;
    const band = Math.max(m.left, m.right, m.top, m.bottom);
    out = await sharp(out, { raw: { width: w, height: h, channels: 3 } }).blur(Math.max(1, band / 8)).raw().toBuffer();
    for (let y = 0; y < height; y++) out.set(rgb.subarray(y * width * 3, (y + 1) * width * 3), ((y + m.top) * w + m.left) * 3);
  }
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}

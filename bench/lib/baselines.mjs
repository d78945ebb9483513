import sharp from 'sharp';
/**
 * The simple fills outpaint is measured against: edge replicate, mirror (libvips' mirror
 * extend, as `sharp().extend({extendWith:'mirror'})`) and blur-extend (the mirror fill blurred
 * in proportion to the band, original pasted back). All return an RGB canvas.
 * @param {Uint8Array} rgb
 * @param {number} width
 * @param {number} height
 * @param {{ left: number; right: number; top: number; bottom: number }} m
 * @param {'replicate' | 'mirror' | 'blur-extend'} kind
 * @returns {Promise<Uint8Array>}
 */
export async function baselineFill(rgb, width, height, m, kind) {
  const raw = { width, height, channels: 3 };
  const ext = { ...m, extendWith: kind === 'replicate' ? 'copy' : 'mirror' };
  let out = await sharp(Buffer.from(rgb), { raw }).extend(ext).raw().toBuffer();
  if (kind === 'blur-extend') {
    const w = width + m.left + m.right;
    const h = height + m.top + m.bottom;
    const band = Math.max(m.left, m.right, m.top, m.bottom);
    out = await sharp(out, { raw: { width: w, height: h, channels: 3 } })
      .blur(Math.max(1, band / 8))
      .raw()
      .toBuffer();
    for (let y = 0; y < height; y++) out.set(rgb.subarray(y * width * 3, (y + 1) * width * 3), ((y + m.top) * w + m.left) * 3);
  }
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}

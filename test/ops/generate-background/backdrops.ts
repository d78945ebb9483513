import sharp from 'sharp';
import { fixture } from '../../helpers.js';

/**
 * Backdrop photos with known geometry built from the fixtures: a sky over a real ground texture
 * (a clear horizon at a chosen height), and a plain texture (no horizon at all).
 */

/** A blue sky (lighter towards the horizon) over a fixture texture, the horizon at `at` of the height. */
export async function skyOver(texture: string, at: number, size = 640, sky: [number, number, number] = [90, 150, 230]): Promise<Buffer> {
  const hy = Math.round(size * at);
  const top = Buffer.alloc(size * hy * 3);
  for (let y = 0; y < hy; y++) {
    const t = y / hy;
    for (let x = 0; x < size; x++) {
      const i = (y * size + x) * 3;
      top[i] = Math.min(255, sky[0] + 90 * t);
      top[i + 1] = Math.min(255, sky[1] + 60 * t);
      top[i + 2] = Math.min(255, sky[2] + 15 * t);
    }
  }
  const ground = await sharp(fixture(`textures/${texture}`))
    .resize(size, size - hy, { fit: 'cover' })
    .removeAlpha()
    .raw()
    .toBuffer();
  return sharp(Buffer.concat([top, ground]), { raw: { width: size, height: size, channels: 3 } })
    .jpeg({ quality: 92 })
    .toBuffer();
}

/** A texture alone, enlarged: no horizontal edge anywhere. */
export async function plainTexture(texture: string, size = 640): Promise<Buffer> {
  return sharp(fixture(`textures/${texture}`))
    .resize(size, size)
    .removeAlpha()
    .jpeg({ quality: 92 })
    .toBuffer();
}

// Test images for the engine tests, built from test/fixtures (see its README).
import path from 'node:path';
import sharp from 'sharp';

export const FIXTURES = path.resolve(import.meta.dirname, '../fixtures');

export interface Raw {
  data: Uint8Array;
  width: number;
  height: number;
}

/** An RGB crop of a fixture photo. */
export async function rgbCrop(file: string, left: number, top: number, width: number, height: number): Promise<Raw> {
  const data = await sharp(path.join(FIXTURES, file)).removeAlpha().toColourspace('srgb').extract({ left, top, width, height }).raw().toBuffer();
  return { data: new Uint8Array(data), width, height };
}

/**
 * A cut-out (exact alpha) composited onto a texture: the RGB image plus the ground-truth
 * alpha at the image resolution.
 */
export async function cutoutOnTexture(
  cutout: string,
  texture: string,
  size = { width: 400, height: 320 },
  at = { left: 90, top: 40 },
): Promise<{ image: Raw; alpha: Uint8Array }> {
  const cut = sharp(path.join(FIXTURES, 'cutouts', cutout));
  const meta = await cut.metadata();
  const bg = sharp(path.join(FIXTURES, 'textures', texture))
    .toColourspace('srgb')
    .removeAlpha()
    .resize(size.width, size.height, { fit: 'cover' });
  const image = await bg
    .composite([{ input: await cut.png().toBuffer(), left: at.left, top: at.top }])
    .removeAlpha()
    .raw()
    .toBuffer();
  const cutAlpha = await sharp(path.join(FIXTURES, 'cutouts', cutout))
    .extractChannel(3)
    .raw()
    .toBuffer();
  const alpha = new Uint8Array(size.width * size.height);
  for (let y = 0; y < meta.height!; y++) {
    for (let x = 0; x < meta.width!; x++) alpha[(y + at.top) * size.width + x + at.left] = cutAlpha[y * meta.width! + x];
  }
  return { image: { data: new Uint8Array(image), width: size.width, height: size.height }, alpha };
}

export { maskIou as iou } from '../../bench/lib/metrics.mjs';

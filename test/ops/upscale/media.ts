// Small inputs for the upscale tests, derived from the shared fixtures at test time.
import sharp from 'sharp';
import { fixture } from '../../helpers.js';

export interface Raw {
  data: Buffer;
  width: number;
  height: number;
  channels: number;
}

/** An RGB crop of a fixture photo resized to width x height (sRGB, 8-bit). */
export async function photoRaw(width: number, height: number, file = 'images/fruits.jpg'): Promise<Raw> {
  const data = await sharp(fixture(file)).removeAlpha().resize(width, height, { fit: 'cover' }).raw().toBuffer();
  return { data, width, height, channels: 3 };
}

export function fromRaw(img: Raw): sharp.Sharp {
  return sharp(img.data, { raw: { width: img.width, height: img.height, channels: img.channels as 1 | 2 | 3 | 4 } });
}

/** A fixture cut-out (exact alpha) at size x size, RGBA. */
export async function cutoutRaw(size: number, name = 'apple'): Promise<Raw> {
  const data = await sharp(fixture(`cutouts/${name}.png`))
    .ensureAlpha()
    .resize(size, size)
    .raw()
    .toBuffer();
  return { data, width: size, height: size, channels: 4 };
}

export async function decode(buf: Buffer): Promise<Raw> {
  const { data, info } = await sharp(buf).raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels };
}

/** The output shrunk back to the input size with Lanczos3, RGB only: comparable with the input. */
export async function shrinkRgb(buf: Buffer, width: number, height: number): Promise<Raw> {
  const data = await sharp(buf).removeAlpha().resize(width, height, { kernel: 'lanczos3', fit: 'fill' }).raw().toBuffer();
  return { data, width, height, channels: 3 };
}

export function psnr(a: Uint8Array, b: Uint8Array): number {
  if (a.length !== b.length) throw new Error(`length ${a.length} vs ${b.length}`);
  let se = 0;
  for (let i = 0; i < a.length; i++) se += (a[i]! - b[i]!) ** 2;
  return 10 * Math.log10((255 * 255) / Math.max(se / a.length, 1e-10));
}

export function channelMeans(img: Raw): number[] {
  const sums = new Array<number>(img.channels).fill(0);
  for (let i = 0; i < img.data.length; i++) sums[i % img.channels]! += img.data[i]!;
  return sums.map((s) => s / (img.width * img.height));
}

/** Builds a valid JPEG of at least `bytes` by padding it with COM segments (each at most 64 KB). */
export function padJpeg(jpeg: Buffer, bytes: number): Buffer {
  const chunk = 65533;
  const segments: Buffer[] = [];
  let total = jpeg.length;
  while (total < bytes) {
    const seg = Buffer.alloc(chunk + 2, 0x20);
    seg[0] = 0xff;
    seg[1] = 0xfe;
    seg.writeUInt16BE(chunk, 2);
    segments.push(seg);
    total += seg.length;
  }
  // Right after SOI (FFD8), where any marker segment may stand.
  return Buffer.concat([jpeg.subarray(0, 2), ...segments, jpeg.subarray(2)]);
}

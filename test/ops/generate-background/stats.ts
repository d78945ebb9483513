import sharp from 'sharp';

/** Decoded output as raw RGB. */
export async function rgbOf(jpeg: Buffer): Promise<{ data: Buffer; width: number; height: number }> {
  const { data, info } = await sharp(jpeg).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

export const luma = (d: Buffer, i: number) => 0.299 * d[i * 3]! + 0.587 * d[i * 3 + 1]! + 0.114 * d[i * 3 + 2]!;

/** Mean RGB over a row range (all columns). */
export function meanRgb(img: { data: Buffer; width: number }, y0: number, y1: number): [number, number, number] {
  const s = [0, 0, 0];
  let n = 0;
  for (let y = y0; y < y1; y++) for (let x = 0; x < img.width; x++, n++) for (let c = 0; c < 3; c++) s[c]! += img.data[(y * img.width + x) * 3 + c]!;
  return [s[0]! / n, s[1]! / n, s[2]! / n];
}

/** Normalised 4x4x4 colour histogram over a row range. */
export function histogram(img: { data: Buffer; width: number }, y0: number, y1: number): Float64Array {
  const h = new Float64Array(64);
  let n = 0;
  for (let y = y0; y < y1; y++) {
    for (let x = 0; x < img.width; x++, n++) {
      const i = (y * img.width + x) * 3;
      h[(img.data[i]! >> 6) * 16 + (img.data[i + 1]! >> 6) * 4 + (img.data[i + 2]! >> 6)]! += 1;
    }
  }
  return h.map((v) => v / n);
}

export const l1 = (a: Float64Array, b: Float64Array) => a.reduce((s, v, i) => s + Math.abs(v - b[i]!), 0);

/** Texture energy: mean absolute horizontal + vertical luma gradient over a row range. */
export function gradientEnergy(img: { data: Buffer; width: number }, y0: number, y1: number): number {
  let s = 0;
  let n = 0;
  for (let y = y0; y < y1 - 1; y++) {
    for (let x = 0; x < img.width - 1; x++, n++) {
      const i = y * img.width + x;
      s += Math.abs(luma(img.data, i + 1) - luma(img.data, i)) + Math.abs(luma(img.data, i + img.width) - luma(img.data, i));
    }
  }
  return s / n;
}

/** Hue in degrees of a mean colour. */
export function hue([r, g, b]: [number, number, number]): number {
  const max = Math.max(r, g, b),
    min = Math.min(r, g, b);
  if (max === min) return 0;
  const d = max - min;
  const h = max === r ? ((g - b) / d) % 6 : max === g ? (b - r) / d + 2 : (r - g) / d + 4;
  return (h * 60 + 360) % 360;
}

/**
 * Carrying a photo's metadata from the input to the output image.
 *
 * - Colour: decodeImage converts every input to sRGB through its embedded profile, so every
 *   output is sRGB and is tagged with an sRGB profile (one rule for all inputs, including
 *   CMYK and wide-gamut ones, which the models could not take as they are).
 * - EXIF: the input's block is kept byte for byte except that Orientation is reset to 1 (the
 *   rotation is already applied to the pixels), the pixel-dimension tags are set to the
 *   output's size, and the thumbnail (IFD1) is unlinked, since it shows the old picture.
 * - Density (DPI): kept as it was.
 *
 * sharp can tag ICC and density when encoding raw pixels, but it writes EXIF only from parsed
 * string tags, which loses binary tags and maker notes; so the EXIF block is spliced into the
 * encoded JPEG (APP1), PNG (eXIf) or WebP (EXIF chunk) here. No maintained npm library writes
 * an existing EXIF block into all three (piexifjs: JPEG only, unmaintained).
 */
import { crc32 } from 'node:zlib';

export interface ImageMetadata {
  /** The TIFF structure of the input's EXIF block (without the "Exif\0\0" header). */
  exif?: Buffer;
  /** Pixels per inch. */
  density?: number;
}

const EXIF_HEADER = Buffer.from('Exif\0\0', 'latin1');

/** Normalises sharp's `metadata().exif` (with or without the JPEG header) to the TIFF bytes. */
export function exifTiff(exif: Buffer | undefined): Buffer | undefined {
  if (!exif || exif.length < 8) return undefined;
  const tiff = exif.subarray(0, 6).equals(EXIF_HEADER) ? exif.subarray(6) : exif;
  const order = tiff.toString('latin1', 0, 2);
  return order === 'II' || order === 'MM' ? tiff : undefined;
}

const TAG_ORIENTATION = 0x0112;
const TAG_IMAGE_WIDTH = 0x0100;
const TAG_IMAGE_LENGTH = 0x0101;
const TAG_EXIF_IFD = 0x8769;
const TAG_PIXEL_X = 0xa002;
const TAG_PIXEL_Y = 0xa003;
const TYPE_SHORT = 3;
const TYPE_LONG = 4;

/** A reader/writer of TIFF IFD entries in place; offsets are checked so a corrupt block is dropped, not written. */
class Tiff {
  readonly le: boolean;
  constructor(readonly buf: Buffer) {
    this.le = buf.toString('latin1', 0, 2) === 'II';
  }
  u16(o: number): number {
    return this.le ? this.buf.readUInt16LE(o) : this.buf.readUInt16BE(o);
  }
  u32(o: number): number {
    return this.le ? this.buf.readUInt32LE(o) : this.buf.readUInt32BE(o);
  }
  w16(o: number, v: number): void {
    if (this.le) this.buf.writeUInt16LE(v, o);
    else this.buf.writeUInt16BE(v, o);
  }
  w32(o: number, v: number): void {
    if (this.le) this.buf.writeUInt32LE(v, o);
    else this.buf.writeUInt32BE(v, o);
  }
  /** Entry offsets of the IFD at `ifd`, and where its next-IFD link sits. */
  entries(ifd: number): { tags: Map<number, number>; next: number } {
    if (ifd + 2 > this.buf.length) throw new RangeError('IFD outside the block');
    const n = this.u16(ifd);
    const next = ifd + 2 + n * 12;
    if (next + 4 > this.buf.length) throw new RangeError('IFD runs past the block');
    const tags = new Map<number, number>();
    for (let i = 0; i < n; i++) tags.set(this.u16(ifd + 2 + i * 12), ifd + 2 + i * 12);
    return { tags, next };
  }
  /** Sets a SHORT or LONG single-value entry, if present. */
  setNumber(entry: number | undefined, value: number): void {
    if (entry === undefined || this.u32(entry + 4) !== 1) return;
    const type = this.u16(entry + 2);
    if (type === TYPE_SHORT && value <= 0xffff) this.w16(entry + 8, value);
    else if (type === TYPE_LONG) this.w32(entry + 8, value);
  }
}

/**
 * A copy of the EXIF TIFF block made true for the output: Orientation 1, pixel dimensions
 * of the output, no thumbnail. Returns undefined for a block it cannot parse.
 */
export function exifForOutput(tiffIn: Buffer, width: number, height: number): Buffer | undefined {
  const buf = Buffer.from(tiffIn);
  try {
    const t = new Tiff(buf);
    const ifd0 = t.entries(t.u32(4));
    t.setNumber(ifd0.tags.get(TAG_ORIENTATION), 1);
    t.setNumber(ifd0.tags.get(TAG_IMAGE_WIDTH), width);
    t.setNumber(ifd0.tags.get(TAG_IMAGE_LENGTH), height);
    t.w32(ifd0.next, 0);
    const exifEntry = ifd0.tags.get(TAG_EXIF_IFD);
    if (exifEntry !== undefined) {
      const sub = t.entries(t.u32(exifEntry + 8));
      t.setNumber(sub.tags.get(TAG_PIXEL_X), width);
      t.setNumber(sub.tags.get(TAG_PIXEL_Y), height);
    }
    return buf;
  } catch {
    return undefined;
  }
}

/** Reads IFD0's Orientation (1 when absent). For tests and diagnostics. */
export function exifOrientation(tiff: Buffer): number {
  const t = new Tiff(tiff);
  const e = t.entries(t.u32(4)).tags.get(TAG_ORIENTATION);
  return e === undefined ? 1 : t.u16(e + 8);
}

/**
 * JPEG: an APP1 segment after SOI and any JFIF APP0, replacing the minimal one libvips writes
 * when it sets the density. Blocks over a segment's 64 KB are dropped.
 */
function spliceJpeg(encoded: Buffer, tiff: Buffer): Buffer {
  const payload = Buffer.concat([EXIF_HEADER, tiff]);
  if (payload.length + 2 > 0xffff) return encoded;
  const parts: Buffer[] = [encoded.subarray(0, 2)];
  let o = 2;
  // Marker segments up to the start of scan; the entropy-coded data after it is copied whole.
  while (o + 4 <= encoded.length && encoded[o] === 0xff && encoded[o + 1] !== 0xda) {
    const end = o + 2 + encoded.readUInt16BE(o + 2);
    const isExif = encoded[o + 1] === 0xe1 && encoded.subarray(o + 4, o + 10).equals(EXIF_HEADER);
    if (!isExif) parts.push(encoded.subarray(o, end));
    o = end;
  }
  parts.push(encoded.subarray(o));
  const jpeg = Buffer.concat(parts);
  let at = 2;
  if (jpeg[2] === 0xff && jpeg[3] === 0xe0) at = 4 + jpeg.readUInt16BE(4);
  const head = Buffer.alloc(4);
  head[0] = 0xff;
  head[1] = 0xe1;
  head.writeUInt16BE(payload.length + 2, 2);
  return Buffer.concat([jpeg.subarray(0, at), head, payload, jpeg.subarray(at)]);
}

function pngChunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const typeAndData = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typeAndData));
  return Buffer.concat([len, typeAndData, crc]);
}

/** PNG: an eXIf chunk before the first IDAT (PNG 3rd edition), replacing libvips' own. */
function splicePng(png: Buffer, tiff: Buffer): Buffer {
  const parts: Buffer[] = [png.subarray(0, 8)];
  let o = 8;
  while (o + 8 <= png.length) {
    const len = png.readUInt32BE(o);
    const type = png.toString('latin1', o + 4, o + 8);
    if (type === 'IDAT') return Buffer.concat([...parts, pngChunk('eXIf', tiff), png.subarray(o)]);
    if (type !== 'eXIf') parts.push(png.subarray(o, o + 12 + len));
    o += 12 + len;
  }
  return png;
}

/**
 * PNG: a pHYs chunk with the density (replacing any), for the grey masks that sharp would turn
 * into sRGB if asked to write a density (withMetadata implies an sRGB profile).
 */
export function insertPngDensity(png: Buffer, dpi: number): Buffer {
  const ppm = Math.round(dpi / 0.0254);
  const data = Buffer.alloc(9);
  data.writeUInt32BE(ppm, 0);
  data.writeUInt32BE(ppm, 4);
  data[8] = 1;
  const parts: Buffer[] = [png.subarray(0, 8)];
  let o = 8;
  while (o + 8 <= png.length) {
    const len = png.readUInt32BE(o);
    const type = png.toString('latin1', o + 4, o + 8);
    if (type === 'IDAT') return Buffer.concat([...parts, pngChunk('pHYs', data), png.subarray(o)]);
    if (type !== 'pHYs') parts.push(png.subarray(o, o + 12 + len));
    o += 12 + len;
  }
  return png;
}

/** WebP: an EXIF chunk at the end and the EXIF flag in VP8X (added when sharp wrote the simple format). */
function spliceWebp(webp: Buffer, tiff: Buffer, width: number, height: number, hasAlpha: boolean): Buffer {
  if (webp.toString('latin1', 0, 4) !== 'RIFF' || webp.toString('latin1', 8, 12) !== 'WEBP') return webp;
  let body = webp.subarray(12);
  if (body.toString('latin1', 0, 4) !== 'VP8X') {
    const vp8x = Buffer.alloc(18);
    vp8x.write('VP8X', 0, 'latin1');
    vp8x.writeUInt32LE(10, 4);
    vp8x[8] = hasAlpha ? 0x10 : 0;
    vp8x.writeUIntLE(width - 1, 12, 3);
    vp8x.writeUIntLE(height - 1, 15, 3);
    body = Buffer.concat([vp8x, body]);
  } else {
    // Drop an EXIF chunk libvips may have written.
    const chunks: Buffer[] = [];
    for (let o = 0; o + 8 <= body.length; ) {
      const len = body.readUInt32LE(o + 4);
      const end = Math.min(body.length, o + 8 + len + (len % 2));
      if (body.toString('latin1', o, o + 4) !== 'EXIF') chunks.push(body.subarray(o, end));
      o = end;
    }
    body = Buffer.concat(chunks);
  }
  body[8] = body[8]! | 0x08;
  const head = Buffer.alloc(8);
  head.write('EXIF', 0, 'latin1');
  head.writeUInt32LE(tiff.length, 4);
  const pad = tiff.length % 2 ? Buffer.alloc(1) : Buffer.alloc(0);
  const riff = Buffer.alloc(12);
  riff.write('RIFF', 0, 'latin1');
  riff.write('WEBP', 8, 'latin1');
  const out = Buffer.concat([riff, body, head, tiff, pad]);
  out.writeUInt32LE(out.length - 8, 4);
  return out;
}

/** Writes an EXIF TIFF block into encoded image bytes of the given format. */
export function insertExif(encoded: Buffer, format: 'jpeg' | 'png' | 'webp', tiff: Buffer, size: { width: number; height: number; hasAlpha: boolean }): Buffer {
  if (format === 'jpeg') return spliceJpeg(encoded, tiff);
  if (format === 'png') return splicePng(encoded, tiff);
  return spliceWebp(encoded, tiff, size.width, size.height, size.hasAlpha);
}

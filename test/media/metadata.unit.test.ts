// The EXIF splicing of src/media/metadata.ts on hand-made blocks: byte order, the tags it
// rewrites, each container, and blocks it must refuse rather than write.
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { exifForOutput, exifOrientation, exifTiff, insertExif } from '../../src/media/metadata.js';

/** A TIFF block: IFD0 {Orientation, ExifIFD -> {PixelX, PixelY}}, linked to an IFD1. */
function tiffBlock(le: boolean, orientation: number): Buffer {
  const b = Buffer.alloc(8 + 2 + 2 * 12 + 4 + 2 + 2 * 12 + 4 + 2 + 12 + 4);
  const w16 = (o: number, v: number) => (le ? b.writeUInt16LE(v, o) : b.writeUInt16BE(v, o));
  const w32 = (o: number, v: number) => (le ? b.writeUInt32LE(v, o) : b.writeUInt32BE(v, o));
  b.write(le ? 'II' : 'MM', 0, 'latin1');
  w16(2, 42);
  w32(4, 8);
  const ifd0 = 8;
  const sub = ifd0 + 2 + 24 + 4;
  const ifd1 = sub + 2 + 24 + 4;
  w16(ifd0, 2);
  w16(ifd0 + 2, 0x0112);
  w16(ifd0 + 4, 3);
  w32(ifd0 + 6, 1);
  w16(ifd0 + 10, orientation);
  w16(ifd0 + 14, 0x8769);
  w16(ifd0 + 16, 4);
  w32(ifd0 + 18, 1);
  w32(ifd0 + 22, sub);
  w32(ifd0 + 26, ifd1);
  w16(sub, 2);
  w16(sub + 2, 0xa002);
  w16(sub + 4, 4);
  w32(sub + 6, 1);
  w32(sub + 10, 100);
  w16(sub + 14, 0xa003);
  w16(sub + 16, 3);
  w32(sub + 18, 1);
  w16(sub + 22, 50);
  w16(ifd1, 1);
  w16(ifd1 + 2, 0x0103);
  w16(ifd1 + 4, 3);
  w32(ifd1 + 6, 1);
  w16(ifd1 + 10, 6);
  return b;
}

describe('exifForOutput', () => {
  for (const le of [true, false]) {
    it(`${le ? 'little' : 'big'}-endian: Orientation 1, pixel size of the output, thumbnail unlinked, input untouched`, () => {
      const src = tiffBlock(le, 8);
      const copy = Buffer.from(src);
      const out = exifForOutput(src, 400, 200)!;
      expect(src.equals(copy)).toBe(true);
      expect(exifOrientation(src)).toBe(8);
      expect(exifOrientation(out)).toBe(1);
      const r32 = (o: number) => (le ? out.readUInt32LE(o) : out.readUInt32BE(o));
      const r16 = (o: number) => (le ? out.readUInt16LE(o) : out.readUInt16BE(o));
      const sub = 8 + 2 + 24 + 4;
      expect(r32(8 + 26)).toBe(0);
      expect(r32(sub + 10)).toBe(400);
      expect(r16(sub + 22)).toBe(200);
    });
  }

  it('refuses a block whose IFD points outside it, and anything that is not TIFF', () => {
    const bad = tiffBlock(true, 1);
    bad.writeUInt32LE(5000, 4);
    expect(exifForOutput(bad, 10, 10)).toBeUndefined();
    expect(exifTiff(Buffer.from('Exif\0\0XXnot a tiff'))).toBeUndefined();
    expect(exifTiff(Buffer.concat([Buffer.from('Exif\0\0'), tiffBlock(false, 1)]))!.toString('latin1', 0, 2)).toBe('MM');
  });
});

describe('insertExif', () => {
  const raw = { raw: { width: 40, height: 30, channels: 3 as const } };
  const pixels = Buffer.alloc(40 * 30 * 3, 128);
  for (const format of ['jpeg', 'png', 'webp'] as const) {
    it(`${format}: sharp reads the spliced block back and the image still decodes`, async () => {
      // WebP without an ICC profile is the simple format: the splice must add a VP8X header.
      const encoded = await sharp(pixels, raw).toFormat(format).toBuffer();
      const tiff = exifForOutput(tiffBlock(true, 6), 40, 30)!;
      const out = insertExif(encoded, format, tiff, { width: 40, height: 30, hasAlpha: false });
      const m = await sharp(out).metadata();
      expect(exifTiff(m.exif)!.equals(tiff)).toBe(true);
      expect([m.width, m.height]).toEqual([40, 30]);
      const back = await sharp(out).raw().toBuffer();
      expect(Math.abs(back[0]! - 128)).toBeLessThan(3);
    });
  }

  it('jpeg: replaces an EXIF segment already there rather than adding a second', async () => {
    const encoded = await sharp(pixels, raw)
      .withExif({ IFD0: { Make: 'first' } })
      .jpeg()
      .toBuffer();
    const out = insertExif(encoded, 'jpeg', tiffBlock(true, 1), { width: 40, height: 30, hasAlpha: false });
    expect(out.includes('first')).toBe(false);
    expect(out.indexOf('Exif\0\0')).toBe(out.lastIndexOf('Exif\0\0'));
  });
});

// Every image operation carries the input's metadata to its output (src/media/metadata.ts):
// tagged sRGB after colour conversion, EXIF kept with Orientation applied and reset to 1, DPI
// kept; strip_metadata drops all of it; quality sets the JPEG quantisation.
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { bufferInput, fixture, runOp } from '../helpers.js';
import { exifOrientation, exifTiff } from '../../src/media/metadata.js';

const MAKE = 'imgtool-metadata-test';
/** Displayed size of the tagged input; it is stored rotated, with Orientation 6. */
const W = 160;
const H = 200;

let tagged: Buffer;
let uprightSrgb: Buffer;

/** The ICC profile's description, from its 'desc' tag (v2 'desc' or v4 'mluc'). */
function iccDescription(icc: Buffer): string {
  const count = icc.readUInt32BE(128);
  for (let i = 0; i < count; i++) {
    const o = 132 + i * 12;
    if (icc.toString('latin1', o, o + 4) !== 'desc') continue;
    const at = icc.readUInt32BE(o + 4);
    const type = icc.toString('latin1', at, at + 4);
    if (type === 'desc') return icc.toString('latin1', at + 12, at + 12 + icc.readUInt32BE(at + 8) - 1);
    if (type === 'mluc') {
      const len = icc.readUInt32BE(at + 20);
      const off = icc.readUInt32BE(at + 24);
      const u16 = icc.subarray(at + off, at + off + len);
      return Buffer.from(u16).swap16().toString('utf16le');
    }
  }
  return '';
}

beforeAll(async () => {
  const upright = await sharp(fixture('images/astronaut.png')).removeAlpha().resize(W, H, { fit: 'cover' }).png().toBuffer();
  uprightSrgb = await sharp(upright).raw().toBuffer();
  // Stored a quarter turn anticlockwise; Orientation 6 tells viewers to turn it back. The
  // pixels are written in Display P3 (sharp converts on output) with a 300 DPI density.
  tagged = await sharp(upright)
    .rotate(270)
    .withExif({ IFD0: { Make: MAKE, Copyright: 'CC0' } })
    .withMetadata({ orientation: 6, density: 300 })
    .withIccProfile('p3')
    .jpeg({ quality: 95 })
    .toBuffer();
  const m = await sharp(tagged).metadata();
  expect([m.width, m.height, m.orientation, m.density]).toEqual([H, W, 6, 300]);
  expect(iccDescription(m.icc!)).toMatch(/P3/);
}, 60_000);

const CASES: Array<{
  op: string;
  /** The test's name, when one operation has more than one case. */
  label?: string;
  inputs: () => Record<string, ReturnType<typeof bufferInput> | string>;
  options: Record<string, unknown>;
  size?: [number, number];
  sameContent?: boolean;
}> = [
  {
    op: 'upscale',
    inputs: () => ({ image: bufferInput('tagged.jpg', tagged) }),
    options: { scale: 2, model: 'slim' },
    size: [2 * W, 2 * H],
    sameContent: true,
  },
  { op: 'outpaint', inputs: () => ({ image: bufferInput('tagged.jpg', tagged) }), options: { right: 40, seed: 1 }, size: [W + 40, H], sameContent: true },
  { op: 'remove-background', inputs: () => ({ image: bufferInput('tagged.jpg', tagged) }), options: { model: 'u2netp' }, size: [W, H] },
  { op: 'generate-background', inputs: () => ({ image: bufferInput('tagged.jpg', tagged) }), options: { scene: 'marble', seed: 1 } },
  {
    op: 'generate-background',
    label: 'generate-background on a background image',
    inputs: () => ({ image: bufferInput('tagged.jpg', tagged), background: fixture('textures/grass.png') }),
    options: {},
  },
  { op: 'try-on', inputs: () => ({ person: bufferInput('tagged.jpg', tagged), garment: fixture('cutouts/tshirt.png') }), options: {}, size: [W, H] },
];

describe('metadata round trip through every image operation', () => {
  for (const c of CASES) {
    it(`${c.label ?? c.op}: sRGB-tagged, EXIF kept with Orientation 1, 300 DPI; strip_metadata drops them`, { timeout: 180_000 }, async () => {
      const { result } = await runOp(c.op, c.inputs(), c.options);
      const m = await sharp(result.data!).metadata();
      if (c.size) expect([m.width, m.height]).toEqual(c.size);
      expect(iccDescription(m.icc!)).toMatch(/sRGB/);
      expect(m.density).toBe(300);
      const tiff = exifTiff(m.exif);
      expect(tiff).toBeDefined();
      expect(tiff!.includes(MAKE)).toBe(true);
      expect(exifOrientation(tiff!)).toBe(1);
      expect(m.orientation ?? 1).toBe(1);

      if (c.sameContent) {
        // The pixels are the input's colours converted to sRGB: the top-left region (the
        // original in both ops) matches the upright sRGB source, so neither the rotation nor
        // the colour conversion was lost.
        const k = c.size![1] / H;
        const region = await sharp(result.data!)
          .extract({ left: 0, top: 0, width: Math.round(W * k * 0.8), height: Math.round(H * k) })
          .resize(Math.round(W * 0.8), H)
          .removeAlpha()
          .raw()
          .toBuffer();
        const ref = await sharp(uprightSrgb, { raw: { width: W, height: H, channels: 3 } })
          .extract({ left: 0, top: 0, width: Math.round(W * 0.8), height: H })
          .raw()
          .toBuffer();
        let err = 0;
        for (let i = 0; i < ref.length; i++) err += Math.abs(region[i]! - ref[i]!);
        expect(err / ref.length).toBeLessThan(8);
      }

      const stripped = await runOp(c.op, c.inputs(), { ...c.options, strip_metadata: true });
      const s = await sharp(stripped.result.data!).metadata();
      expect([s.icc, s.exif]).toEqual([undefined, undefined]);
      // JPEG's JFIF header always states a density; libjpeg's default 72 means "none given".
      expect(s.density ?? 72).toBe(72);
      if (c.size) expect([s.width, s.height]).toEqual(c.size);
    });
  }
});

/** The first luminance quantisation value of a baseline JPEG (libjpeg: 3 at quality 92, 16 at 50). */
function firstQuant(jpeg: Buffer): number {
  for (let o = 2; o + 4 < jpeg.length; ) {
    if (jpeg[o] !== 0xff) break;
    if (jpeg[o + 1] === 0xdb) return jpeg[o + 5]!;
    o += 2 + jpeg.readUInt16BE(o + 2);
  }
  throw new Error('no DQT');
}

describe('quality', () => {
  it('defaults to 92 and follows --quality for JPEG outputs; out-of-range values are refused', { timeout: 120_000 }, async () => {
    const image = bufferInput('tagged.jpg', tagged);
    const def = await runOp('upscale', { image }, { scale: 2, model: 'slim' });
    const q50 = await runOp('upscale', { image }, { scale: 2, model: 'slim', quality: '50' });
    expect(firstQuant(def.result.data!)).toBe(3);
    expect(firstQuant(q50.result.data!)).toBe(16);
    expect(q50.result.data!.length).toBeLessThan(def.result.data!.length * 0.7);
    const out = await runOp('outpaint', { image }, { right: 40, seed: 1, quality: 70 });
    expect(firstQuant(out.result.data!)).toBe(10);
    for (const quality of [0, 101, 50.5]) {
      await expect(runOp('upscale', { image }, { scale: 2, quality })).rejects.toMatchObject({
        code: 'invalid_parameter',
        message: expect.stringMatching(/quality/),
      });
    }
  });
});

describe('grey mask output', () => {
  it('remove-background mask_only stays one grey band, untagged, and keeps the DPI and EXIF', { timeout: 120_000 }, async () => {
    const { result } = await runOp('remove-background', { image: bufferInput('tagged.jpg', tagged) }, { model: 'u2netp', mask_only: true });
    const m = await sharp(result.data!).metadata();
    expect([m.channels, m.space, m.icc, m.density]).toEqual([1, 'b-w', undefined, 300]);
    expect(exifTiff(m.exif)!.includes(MAKE)).toBe(true);
  });
});

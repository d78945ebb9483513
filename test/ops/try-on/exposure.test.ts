// Issue 35, sixth round: lit once, by the scene, at the scene's exposure. The scene's shading
// (shade.ts) is relative to the torso's median light, so before this a white T-shirt kept its
// studio level in a dim photo. The same person photographed at half the exposure must get a
// garment about half as bright, and a well-exposed photo must leave it at its own level.
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import type { TryOnLight } from '../../../src/ops/try-on/pipeline.js';
import { bufferInput, fixture } from '../../helpers.js';
import { renderPair } from './render.js';

const SLOW = 600_000;

async function rgbOf(src: string | Buffer) {
  const { data, info } = await sharp(src).toColourspace('srgb').flatten({ background: '#ffffff' }).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

async function render(person: Buffer, garment: Buffer, light: TryOnLight) {
  const res = await renderPair(bufferInput('person.png', person), bufferInput('garment.png', garment), light);
  return { img: await rgbOf(res.data as Buffer), meta: res.meta as { exposure: { white: number; gain: number } } };
}

const luma = (d: Buffer, i: number) => 0.299 * d[i * 3]! + 0.587 * d[i * 3 + 1]! + 0.114 * d[i * 3 + 2]!;

describe('try-on exposure (issue 35)', () => {
  it(
    'a dim photo of the same person gets a darker garment; a well-exposed one keeps its level',
    async () => {
      const base = await rgbOf(fixture('images/astronaut.png'));
      const dim = Buffer.from(base.data.map((v) => Math.round(v * 0.5)));
      const png = (data: Buffer) =>
        sharp(data, { raw: { width: base.width, height: base.height, channels: 3 } })
          .png()
          .toBuffer();
      const tee = await sharp(fixture('cutouts/tshirt.png')).png().toBuffer();
      const basePng = await png(base.data);
      const bright = await render(basePng, tee, 'scene');
      const flat = await render(basePng, tee, 'flat');
      const dark = await render(await png(dim), tee, 'scene');
      // Where the garment lies (the unlit render differs from the photo), on the central torso.
      let sb = 0,
        sd = 0,
        sf = 0,
        n = 0;
      for (let y = Math.round(base.height * 0.55); y < Math.round(base.height * 0.9); y++) {
        for (let x = Math.round(base.width * 0.3); x < Math.round(base.width * 0.7); x++) {
          const i = y * base.width + x;
          let d = 0;
          for (let c = 0; c < 3; c++) d = Math.max(d, Math.abs(flat.img.data[i * 3 + c]! - base.data[i * 3 + c]!));
          if (d <= 24) continue;
          sb += luma(bright.img.data, i);
          sd += luma(dark.img.data, i);
          sf += luma(flat.img.data, i);
          n++;
        }
      }
      const ratio = sd / sb;
      console.log('exposure', { pixels: n, bright: sb / n, dim: sd / n, flat: sf / n, ratio, meta: [bright.meta.exposure, dark.meta.exposure] });
      expect(n).toBeGreaterThan(5000);
      // Half the exposure: the garment about half as bright (its own relative shading is the same).
      expect(ratio).toBeGreaterThan(0.4);
      expect(ratio).toBeLessThan(0.65);
      // The astronaut photo is well exposed (white point near studio white): the garment keeps
      // about its own level there.
      expect(bright.meta.exposure.gain).toBeGreaterThan(0.9);
      expect(dark.meta.exposure.gain).toBeLessThan(0.6);
    },
    SLOW,
  );
});

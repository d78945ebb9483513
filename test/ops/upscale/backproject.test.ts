// Back-projection: the output shrunk back must match the input better, and detail must survive.
import { describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { upscaleRgb } from '../../../src/engine/esrgan.js';
import { backProject } from '../../../src/ops/upscale/backproject.js';
import { photoRaw, psnr } from './media.js';

const shrink = async (data: Uint8Array, w: number, h: number, toW: number, toH: number) =>
  sharp(data, { raw: { width: w, height: h, channels: 3 } })
    .resize(toW, toH, { kernel: 'lanczos3', fit: 'fill' })
    .raw()
    .toBuffer();

describe('backProject', () => {
  it('makes the 4x output consistent with the input and closer to the real original', async () => {
    const orig = await photoRaw(256, 256, 'images/baboon.jpg');
    const low = await shrink(orig.data, 256, 256, 64, 64);
    const out = (await upscaleRgb({ data: low, width: 64, height: 64 }, { model: 'slim', scale: 4 })).data;
    const before = Uint8Array.from(out);
    await backProject(out, 256, 256, low, 64, 64);
    const consistency = (img: Uint8Array) => shrink(img, 256, 256, 64, 64).then((d) => psnr(d, low));
    expect(await consistency(out)).toBeGreaterThan((await consistency(before)) + 3);
    expect(psnr(out, orig.data)).toBeGreaterThan(psnr(before, orig.data) + 0.1);
    // It corrects, it does not replace: the result stays close to the model's output.
    expect(psnr(out, before)).toBeGreaterThan(30);
  });

  it('leaves an output that already shrinks back to the input nearly unchanged', async () => {
    const flat = new Uint8Array(64 * 64 * 3).fill(90);
    const big = new Uint8Array(128 * 128 * 3).fill(90);
    await backProject(big, 128, 128, flat, 64, 64);
    expect(big.every((v) => v === 90)).toBe(true);
  });

  it('stops on an aborted signal', async () => {
    const ac = new AbortController();
    ac.abort();
    await expect(backProject(new Uint8Array(128 * 128 * 3), 128, 128, new Uint8Array(64 * 64 * 3), 64, 64, { signal: ac.signal })).rejects.toMatchObject({
      code: 'job_cancelled',
    });
  });
});

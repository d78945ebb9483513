// Each converted ESRGAN graph must reproduce the original TF.js model (cpu backend).
import { beforeAll, describe, expect, it } from 'vitest';
import { getSession } from '../../src/engine/models.js';
import { inferTile } from '../../src/engine/esrgan.js';
import { hwcToChw } from '../../src/engine/tensor.js';
import { rgbCrop } from './fixtures.js';
import { loadUpscalerModel, predictTf, useBackend } from './tfjs-reference.js';

const SIZE = 24;

beforeAll(async () => {
  await useBackend('cpu');
});

describe('ESRGAN ONNX conversion matches TF.js', () => {
  for (const model of ['slim', 'medium', 'thick'] as const) {
    for (const scale of [2, 4] as const) {
      it(`esrgan-${model}-x${scale}: max |diff| <= 0.5 and PSNR >= 50 dB on 0..255`, async () => {
        const img = await rgbCrop('images/astronaut.png', 200, 100, SIZE, SIZE);
        const tfModel = await loadUpscalerModel(model, scale);
        const ref = await predictTf(tfModel, img.data, SIZE, SIZE, model === 'thick');
        tfModel.dispose();

        const session = await getSession(`esrgan-${model}-x${scale}`);
        const out = await inferTile(session, hwcToChw(img.data, SIZE, SIZE, 3), SIZE, SIZE);

        const ow = SIZE * scale;
        const plane = ow * ow;
        expect(out.length).toBe(3 * plane);
        expect(ref.length).toBe(3 * plane);
        let maxDiff = 0;
        let se = 0;
        for (let i = 0; i < plane; i++) {
          for (let c = 0; c < 3; c++) {
            const d = Math.abs(out[c * plane + i] - ref[i * 3 + c]);
            maxDiff = Math.max(maxDiff, d);
            se += d * d;
          }
        }
        const psnr = 10 * Math.log10((255 * 255) / Math.max(se / (3 * plane), 1e-12));
        console.log(`esrgan-${model}-x${scale}: max diff ${maxDiff.toExponential(2)}, PSNR ${psnr.toFixed(1)} dB`);
        expect(maxDiff).toBeLessThanOrEqual(0.5);
        expect(psnr).toBeGreaterThanOrEqual(50);
      }, 120_000);
    }
  }
});

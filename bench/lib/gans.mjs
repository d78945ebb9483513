/**
 * idealo's GANS (ISR RRDN C4 D3 G32 G0 32 T10, 4x, trained on DIV2K with VGG19 perceptual and
 * adversarial losses), measured as a candidate `--model` and not shipped: at 4x it draws a
 * rectilinear brick/mesh texture on grass and foliage and colour speckles on grey images
 * (docs/ops/upscale.md, "GANS"). Kept here so the bench rows and the converter's reference test
 * can be reproduced.
 *
 * Only the model files of the devDependency @upscalerjs/esrgan-legacy are read (never its code),
 * converted in memory by the project's own converter (models/convert/tfjs-to-onnx.mjs, which
 * widens the uint8-quantized weights exactly as TF.js does). Nothing here is built by
 * models/build.mjs or reachable from imgtool.
 */
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as ort from 'onnxruntime-node';
import sharp from 'sharp';
import { packageDir } from '../../models/build.mjs';
import { convertTfjsLayersModel } from '../../models/convert/tfjs-to-onnx.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const GANS_PACKAGE = '@upscalerjs/esrgan-legacy';
/** Same in @upscalerjs/models@0.9.0 models/idealo/gans (identical weight shard, sha256 9c83e573...). */
export const GANS_MODEL_JSON = 'models/gans/model.json';

export function gansModelJson() {
  return path.join(packageDir(GANS_PACKAGE), GANS_MODEL_JSON);
}

/** The ONNX graph: NCHW float32 0..255 in and out (the original works on 0..1), like the shipped ESRGAN graphs. */
export function gansOnnx() {
  return convertTfjsLayersModel(gansModelJson(), {
    name: 'idealo-gans-x4',
    docString: `idealo ISR GANS (RRDN x4); converted from ${GANS_PACKAGE} ${GANS_MODEL_JSON}`,
    inputScale: 1 / 255,
    outputScale: 255,
  });
}

/**
 * An upscaler with the engine's tiling (192 px tiles, 24 px overlap) on one onnxruntime session
 * with `threads` intra-op threads (the shipped models run one single-threaded session per core
 * instead; the CPU time differs by a few per cent). 2x is 4x then a Lanczos3 shrink, as the engine
 * does for the Real-ESRGAN models.
 */
export async function gansUpscaler({ threads = 2 } = {}) {
  const session = await ort.InferenceSession.create(Buffer.from(gansOnnx()), { intraOpNumThreads: threads });
  const { runTiled } = await import(pathToFileURL(path.join(root, 'dist/engine/tiling.js')).href);
  const infer = async (tile, tw, th) => {
    const out = await session.run({ [session.inputNames[0]]: new ort.Tensor('float32', tile, [1, 3, th, tw]) });
    return out[session.outputNames[0]].data;
  };
  return async ({ data, width, height }, scale) => {
    const big = await runTiled({ data, width, height, channels: 3 }, { tile: 192, overlap: 24, scale: 4, infer });
    if (scale === 4) return big;
    const small = await sharp(big.data, { raw: { width: big.width, height: big.height, channels: 3 } })
      .resize(width * scale, height * scale, { kernel: 'lanczos3', fit: 'fill' })
      .raw()
      .toBuffer();
    return { data: new Uint8Array(small), width: width * scale, height: height * scale };
  };
}

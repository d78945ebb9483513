// The TF.js side of the ESRGAN comparison: loads an @upscalerjs model straight from
// node_modules with esrgan-thick's custom layers registered, as UpscalerJS does.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import * as tf from '@tensorflow/tfjs';

const require = createRequire(import.meta.url);
let registered = false;

function registerCustomLayers(): void {
  if (registered) return;
  registered = true;
  const first = (x: tf.Tensor | tf.Tensor[]) => (Array.isArray(x) ? x[0] : x);
  class MultiplyBeta extends tf.layers.Layer {
    static className = 'MultiplyBeta';
    beta: number;
    constructor(config: { beta?: number; name?: string }) {
      super({ name: config.name });
      this.beta = config.beta ?? 0.2;
    }
    call(inputs: tf.Tensor | tf.Tensor[]) {
      return tf.mul(first(inputs), this.beta);
    }
    getConfig() {
      return { ...super.getConfig(), beta: this.beta };
    }
  }
  tf.serialization.registerClass(MultiplyBeta);
  for (const s of [2, 3, 4, 8]) {
    class PixelShuffle extends tf.layers.Layer {
      static className = `PixelShuffle${s}x`;
      computeOutputShape(shape: tf.Shape | tf.Shape[]) {
        const [n, h, w, c] = shape as tf.Shape;
        return [n, h == null ? null : h * s, w == null ? null : w * s, (c as number) / (s * s)];
      }
      call(inputs: tf.Tensor | tf.Tensor[]) {
        return tf.depthToSpace(first(inputs) as tf.Tensor4D, s, 'NHWC');
      }
    }
    tf.serialization.registerClass(PixelShuffle);
  }
}

export type TfBackend = 'cpu' | 'wasm';

export async function useBackend(backend: TfBackend): Promise<void> {
  if (backend === 'wasm') {
    const wasm = await import('@tensorflow/tfjs-backend-wasm');
    // Point at the .wasm files inside node_modules; nothing is fetched.
    wasm.setWasmPaths(path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm')) + '/');
  }
  await tf.setBackend(backend);
  await tf.ready();
}

/** Where each model's TF.js files are: the three ESRGAN packages, and idealo's GANS in esrgan-legacy. */
function upscalerModelDir(model: UpscalerModel, scale: number): string {
  const pkg = model === 'gans' ? '@upscalerjs/esrgan-legacy' : `@upscalerjs/esrgan-${model}`;
  // Along Node's lookup paths: these packages' "exports" leave out package.json and the models.
  const root = (require.resolve.paths(pkg) ?? []).map((d) => path.join(d, pkg)).find((d) => fs.existsSync(path.join(d, 'package.json')));
  if (!root) throw new Error(`${pkg} is not installed`);
  return model === 'gans' ? path.join(root, 'models', 'gans') : path.join(root, 'models', `x${scale}`);
}

export type UpscalerModel = 'slim' | 'medium' | 'thick' | 'gans';

export async function loadUpscalerModel(model: UpscalerModel, scale: number): Promise<tf.LayersModel> {
  registerCustomLayers();
  const dir = upscalerModelDir(model, scale);
  const json = JSON.parse(fs.readFileSync(path.join(dir, 'model.json'), 'utf8'));
  const weightData = Buffer.concat(json.weightsManifest.flatMap((g: { paths: string[] }) => g.paths.map((p) => fs.readFileSync(path.join(dir, p)))));
  // TF.js decodes GANS's uint8-quantized weights itself (the spec carries min and scale).
  return tf.loadLayersModel(
    tf.io.fromMemory({
      modelTopology: json.modelTopology,
      weightSpecs: json.weightsManifest.flatMap((g: { weights: tf.io.WeightsManifestEntry[] }) => g.weights),
      weightData: weightData.buffer.slice(weightData.byteOffset, weightData.byteOffset + weightData.byteLength),
    }),
  );
}

/** Runs the TF.js model on interleaved RGB bytes; returns NHWC float on 0..255 like our ONNX graphs. */
export async function predictTf(model: tf.LayersModel, rgb: Uint8Array, width: number, height: number, zeroToOne: boolean): Promise<Float32Array> {
  const y = tf.tidy(() => {
    let x = tf.tensor4d(Float32Array.from(rgb), [1, height, width, 3]);
    if (zeroToOne) x = tf.div(x, 255);
    const out = model.predict(x) as tf.Tensor;
    return zeroToOne ? tf.mul(out, 255) : out;
  });
  const data = (await y.data()) as Float32Array;
  y.dispose();
  return data;
}

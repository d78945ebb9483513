// Shared by the real-model try-on tests: the pipeline run at the operation's default options,
// and a render or fixture read back as RGB.
import sharp from 'sharp';
import type { LoadedInput } from '../../../src/ops/define.js';
import { getOperation } from '../../../src/ops/registry.js';
import type { TryOnOptions } from '../../../src/ops/try-on/index.js';
import { renderTryOn, type TryOnLight } from '../../../src/ops/try-on/pipeline.js';
import { parseOptions } from '../../../src/ops/validate.js';

/** try-on's pipeline on a person and a garment at the default options, lit `light` (`flat`: the unlit template the tests measure against). */
export function renderPair(person: LoadedInput, garment: LoadedInput, light: TryOnLight): ReturnType<typeof renderTryOn> {
  const options = parseOptions(getOperation('try-on')!, {}, 'field') as TryOnOptions;
  const ctx = { signal: new AbortController().signal, onProgress() {}, warn() {}, tempPath: (e: string) => `/tmp/imgtool-try-on-test.${e}` };
  return renderTryOn({ operation: 'try-on', inputs: { person, garment }, options }, ctx as never, light);
}

/** An image file or buffer as 3-channel RGB, flattened on white. */
export async function rgb(src: string | Buffer) {
  const { data, info } = await sharp(src).flatten({ background: '#ffffff' }).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

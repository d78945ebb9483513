import { z } from 'zod';
import { defineOperation, MB } from '../define.js';
import { choiceField, numberField, qualityField, stripMetadataField } from '../fields.js';
import { imageInput } from '../common.js';

export const UPSCALE_MODELS = ['slim', 'medium', 'thick', 'realesrgan', 'fast'] as const;
export const MAX_OUTPUT_SIDE = 6000;
/** Chosen by eye on the fixture photos at 100% (docs/ops/upscale.md "Texture"). */
export const DEFAULT_TEXTURE = 0.75;

export const upscaleOptions = z.object({
  scale: choiceField([2, 4] as const, 'Upscaling factor: 2 or 4'),
  model: choiceField(
    UPSCALE_MODELS,
    'Model (imgtool extension): slim, medium, thick are faithful ESRGANs (thick the most accurate); realesrgan is Real-ESRGAN x4plus, crisp and slow; fast is Real-ESRGAN general-x4v3, crisp and quick for batches',
  )
    .default('thick')
    .meta({ extension: true }),
  texture: numberField({
    min: 0,
    max: 1,
    description:
      'Texture (imgtool extension, realesrgan and fast only): how much of the fine texture the model flattened (fur, gravel, speckles) is given back from the input; 0 = the model alone, 1 = all of it. The fidelity models keep texture already and ignore it',
  })
    .default(DEFAULT_TEXTURE)
    .meta({ extension: true }),
  quality: qualityField(),
  strip_metadata: stripMetadataField(),
});

/**
 * Upscale an image 2x or 4x with ESRGAN.
 * @example imgtool upscale 'photos/*.jpg' --scale 4
 */
export const upscale = defineOperation({
  name: 'upscale',
  path: '/v1/upscale',
  summary: 'Upscale images 2x or 4x (output at most 6000x6000)',
  description: 'Raises resolution with an ESRGAN or Real-ESRGAN model run tile by tile. Output is JPEG unless the input has an alpha channel, then PNG.',
  mode: 'sync',
  bodies: ['json', 'multipart'],
  acceptsImageResponse: true,
  inputs: [imageInput()],
  limits: { maxBytes: 25 * MB, minSide: 64, maxSide: 6000, formats: [] },
  options: upscaleOptions,
  examples: ["imgtool upscale 'photos/*.jpg' --scale 4", 'imgtool upscale logo.png --scale 2 -o out/'],
  cost: (o) => (o.scale === 4 ? 2 : 1),
  costNote: '1 credit at 2x, 2 at 4x',
  outputExt: () => undefined,
  load: async () => (await import('./pipeline.js')).run,
});

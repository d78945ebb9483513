import { z } from 'zod';
import { defineOperation, MB } from '../define.js';
import { choiceField, numberField, objectField, qualityField, stringField, stripMetadataField } from '../fields.js';
import { imageInput } from '../common.js';

export const SCENES = ['marble', 'wood', 'industrial', 'linen', 'brick', 'counter'] as const;
export const OUTPUT_SIZE = 1024;

export const imageTransform = z.object({
  scale: z
    .preprocess(
      (v) => (typeof v === 'string' && v.trim() !== '' ? Number(v) : v),
      z
        .number({ error: 'must be a number greater than 0 and at most 2' })
        .gt(0, { error: 'must be a number greater than 0 and at most 2' })
        .max(2, { error: 'must be a number greater than 0 and at most 2' }),
    )
    .optional()
    .describe(
      'Subject size relative to the canvas, (0, 2]; default 1, or 0.6 when the background was removed automatically, or at most 0.45 on a background image',
    ),
  x_center: numberField({ min: 0, max: 1, description: 'Horizontal centre of the subject, 0..1' }).default(0.5),
  y_center: numberField({ min: 0, max: 1, description: 'Vertical centre of the subject, 0..1' }).default(0.5),
});

export const generateBackgroundOptions = z.object({
  image_transform: objectField(imageTransform, 'Placement of the subject {scale, x_center, y_center}').default({ x_center: 0.5, y_center: 0.5 }),
  scene: choiceField(SCENES, 'Preset scene; when given, prompt and negative_prompt are ignored').optional(),
  prompt: stringField(
    'Description of the desired scene (places, surfaces, materials, colours, time of day, weather, mood; vocabulary in docs/ops/generate-background.md)',
    2000,
  ).optional(),
  negative_prompt: stringField('Comma-separated attributes to discourage', 2000).optional(),
  seed: numberField({ min: 0, max: 2 ** 31 - 1, int: true, description: 'Random seed for reproducible scenes (imgtool extension)' })
    .optional()
    .meta({ extension: true }),
  quality: qualityField(),
  strip_metadata: stripMetadataField(),
});

export type GenerateBackgroundOptions = z.output<typeof generateBackgroundOptions>;

/**
 * Place the subject of an image in a new product-photo scene.
 * @example imgtool generate-background product.jpg --scene marble
 */
export const generateBackground = defineOperation({
  name: 'generate-background',
  path: '/v1/generate-background',
  summary: 'Place the subject in a new scene (presets, a prompt, or your own photo), 1024x1024 JPEG',
  description:
    'RGB inputs get their background removed first; RGBA inputs keep their alpha as the cut-out. Scenes (tabletops, outdoor places, studio sweeps, podiums, interiors) are rendered procedurally and the subject is graded to their light; on your own photo (background_image) it stands on the estimated ground line of the photo.',
  mode: 'sync',
  bodies: ['json', 'multipart'],
  acceptsImageResponse: true,
  inputs: [
    imageInput(),
    {
      key: 'background',
      kind: 'image',
      urlField: 'background_image_url',
      fileField: 'background_image',
      inlineBase64: true,
      optional: true,
      flag: 'background-image',
      description:
        'Your own backdrop photo (file, glob or http(s) URL; imgtool extension): the subject is placed on its estimated ground line with a matching shadow and grade; scene, prompt and negative_prompt are then ignored',
    },
  ],
  limits: { maxBytes: 25 * MB, minSide: 64, maxSide: 6000, formats: [] },
  options: generateBackgroundOptions,
  examples: [
    'imgtool generate-background product.jpg --scene marble',
    "imgtool generate-background bag.png --prompt 'warm wooden table by a sunny window' --seed 7",
    'imgtool generate-background bag.png --background-image beach.jpg',
  ],
  cost: () => 2,
  costNote: '2 credits',
  outputExt: () => 'jpg',
  load: async () => (await import('./pipeline.js')).run,
});

import { z } from 'zod';
import { defineOperation, MB } from '../define.js';
import { booleanField, choiceField, coerceBoolean, coerceObject, numberField, stripMetadataField } from '../fields.js';
import { imageInput } from '../common.js';

export const MARGIN_PATTERN = /^(\d+(?:\.\d+)?)(%|px)$/;

const margin = (which: string) =>
  z
    .string({ error: 'must be a percentage like "10%" (0-49%) or pixels like "20px"' })
    .trim()
    .refine((s) => {
      const m = MARGIN_PATTERN.exec(s);
      if (!m) return false;
      return m[2] === 'px' || Number(m[1]) <= 49;
    }, 'must be a percentage like "10%" (0-49%) or pixels like "20px"')
    .optional()
    .describe(`Margin ${which} ("N%" of the image, 0-49, or "Npx"); only with crop (beta)`);

export const shadowObject = z.object({
  enabled: booleanField('Whether to render the shadow'),
  opacity: numberField({ min: 0, max: 1, description: 'Shadow opacity' }).default(0.5),
  light_source: z
    .preprocess(
      coerceObject,
      z.object({
        size: numberField({ min: 0, max: 1, description: 'Light size: larger is softer' }).default(0.3),
        position: z
          .preprocess(
            coerceObject,
            z.object({
              x: numberField({ min: -1, max: 1, description: 'Light x (-1 left .. 1 right)' }).default(-0.3),
              y: numberField({ min: -1, max: 1, description: 'Light y (-1 front .. 1 back)' }).default(-0.6),
              z: numberField({ min: 0, max: 2, description: 'Light height' }).default(0.7),
            }),
          )
          .default({ x: -0.3, y: -0.6, z: 0.7 }),
      }),
    )
    .default({ size: 0.3, position: { x: -0.3, y: -0.6, z: 0.7 } }),
});

export type ShadowOptions = z.output<typeof shadowObject>;

export const removeBackgroundOptions = z.object({
  format: choiceField(['png'] as const, 'Output format (only png)').default('png'),
  shadow: z
    .preprocess(
      (v) => coerceObject(coerceBoolean(v)),
      z.union([z.boolean(), shadowObject], { error: 'must be true, false or a shadow object {enabled, opacity, light_source}' }),
    )
    .default(false)
    .describe('Add a soft ground shadow: true, or a JSON object {enabled, opacity, light_source: {size, position: {x, y, z}}} (+3 credits)'),
  crop: booleanField('Crop to the detected subject').default(false),
  margin: margin('on all sides'),
  margin_left: margin('left'),
  margin_right: margin('right'),
  margin_top: margin('top'),
  margin_bottom: margin('bottom'),
  model: choiceField(['isnet', 'u2netp'] as const, 'Segmentation model (imgtool extension): isnet = quality, u2netp = fast')
    .default('isnet')
    .meta({ extension: true }),
  keep: choiceField(
    ['auto', 'largest', 'all'] as const,
    'Which regions are the subject (imgtool extension): auto = the subject with all its parts (ear cups, a base, leaves, antennae), small and centred or filling the frame and cut by its borders; suits most product, plant, pet and portrait photos. largest = only the largest connected object: one product when the backdrop holds others of its own. all = every salient object either model finds: group shots and several products when auto leaves one out',
  )
    .default('auto')
    .meta({ extension: true }),
  mask_only: booleanField('Write the greyscale alpha mask instead of the cut-out (imgtool extension)').default(false).meta({ extension: true }),
  background_color: z
    .string()
    .regex(/^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/, 'must be a colour like "#fff" or "#00ff00"')
    .optional()
    .describe('Flatten the cut-out onto this colour, still PNG (imgtool extension)')
    .meta({ extension: true }),
  strip_metadata: stripMetadataField(),
});

export type RemoveBackgroundOptions = z.output<typeof removeBackgroundOptions>;

export function shadowEnabled(shadow: RemoveBackgroundOptions['shadow']): boolean {
  return typeof shadow === 'boolean' ? shadow : shadow.enabled;
}

/**
 * Cut the subject out of an image as a transparent PNG.
 * @example imgtool remove-background 'samples/*.jpg' -o out/
 */
export const removeBackground = defineOperation({
  name: 'remove-background',
  path: '/v1/remove-background',
  summary: 'Remove image backgrounds (PNG cut-outs; optional shadow, crop, margins)',
  description: 'Segments the subject with ISNet (or u2netp), refines the edge at full resolution and decontaminates edge colours.',
  mode: 'sync',
  bodies: ['json', 'multipart'],
  acceptsImageResponse: true,
  inputs: [imageInput()],
  limits: { maxBytes: 25 * MB, minSide: 64, maxSide: 10000, formats: ['jpeg', 'png', 'webp', 'heif', 'avif'] },
  options: removeBackgroundOptions,
  examples: [
    "imgtool remove-background 'samples/*.jpg' -o out/",
    'imgtool remove-background product.jpg --crop --margin 5% --shadow',
    'imgtool remove-background shoe.heic --shadow \'{"enabled":true,"opacity":0.4}\'',
  ],
  cost: (o) => 1 + (shadowEnabled(o.shadow) ? 3 : 0),
  costNote: '1 credit, +3 with shadow',
  outputExt: () => 'png',
  load: async () => (await import('./pipeline.js')).run,
});

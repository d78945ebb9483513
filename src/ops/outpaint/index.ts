import { z } from 'zod';
import { defineOperation, MB } from '../define.js';
import { choiceField, numberField, qualityField, stripMetadataField } from '../fields.js';
import { imageInput } from '../common.js';

const side = (name: string) => numberField({ min: 0, max: 2000, int: true, description: `Pixels to add on the ${name} (0-2000)` }).default(0);

export const outpaintOptions = z
  .object({
    left: side('left'),
    top: side('top'),
    right: side('right'),
    bottom: side('bottom'),
    creativity: numberField({ min: 0, max: 1, description: '0 = most faithful continuation, 1 = freest' }).default(0),
    output_format: choiceField(['jpeg', 'png'] as const, 'Output format').default('jpeg'),
    quality: qualityField(),
    strip_metadata: stripMetadataField(),
    seed: numberField({ min: 0, max: 2 ** 31 - 1, int: true, description: 'Random seed for reproducible results (imgtool extension)' })
      .optional()
      .meta({ extension: true }),
  })
  .refine((o) => o.left + o.top + o.right + o.bottom > 0, {
    // {name} tokens become --flags on the CLI and plain field names in the API.
    message: 'at least one of {left}, {top}, {right}, {bottom} must be non-zero',
  });

/**
 * Extend an image beyond its borders with content that continues it.
 * @example imgtool outpaint photo.jpg --right 512 --bottom 256
 */
export const outpaint = defineOperation({
  name: 'outpaint',
  path: '/v1/outpaint',
  summary: 'Extend images beyond their borders',
  description: 'Fills new bands on any side with patch-based synthesis from the picture itself. Input JPEG or PNG.',
  mode: 'sync',
  bodies: ['json', 'multipart'],
  acceptsImageResponse: true,
  inputs: [imageInput()],
  limits: { maxBytes: 25 * MB, minSide: 128, maxSide: 6000, formats: ['jpeg', 'png'] },
  options: outpaintOptions,
  examples: ['imgtool outpaint photo.jpg --right 512 --bottom 256', "imgtool outpaint 'wide/*.png' --left 200 --right 200 --output-format png"],
  cost: () => 2,
  costNote: '2 credits',
  outputExt: (o) => (o.output_format === 'png' ? 'png' : 'jpg'),
  load: async () => (await import('./pipeline.js')).run,
});

import { z } from 'zod';
import { defineOperation, MB } from '../define.js';
import { booleanField, choiceField, qualityField, stripMetadataField } from '../fields.js';

export const EXTRACTION_CREDITS = 5;

export const tryOnOptions = z.object({
  garment_mode: choiceField(['auto', 'full', 'upper', 'lower'] as const, 'Deprecated: accepted and ignored (the garment type is detected)').default('auto'),
  preprocess_garment: booleanField('Extract the garment from its photo first').default(true),
  remove_background: booleanField('Return the person on a white background').default(false),
  wait_for_result: booleanField('Remote mode: wait for the result (true) or return a job id (false)').default(true),
  quality: qualityField(),
  strip_metadata: stripMetadataField(),
});

export type TryOnOptions = z.output<typeof tryOnOptions>;

/**
 * Dress a person photo in a garment photo (beta).
 * @example imgtool try-on --person me.jpg --garment shirt.jpg
 */
export const tryOn = defineOperation({
  name: 'try-on',
  path: '/v1/try-on',
  jobPath: '/v1/try-on/job',
  summary: 'Try a garment on a person image (beta; best on tops)',
  description: 'Segments the person, fits the garment to the torso with a smooth warp and shades it with the person\'s lighting. Output JPEG the size of the person image.',
  mode: 'sync-or-async',
  bodies: ['json', 'multipart'],
  acceptsImageResponse: false,
  inputs: [
    { key: 'person', kind: 'image', urlField: 'person_image_url', fileField: 'person_image', inlineBase64: true, description: 'Person image (one person, plain background best)' },
    { key: 'garment', kind: 'image', urlField: 'garment_image_url', fileField: 'garment_image', inlineBase64: true, description: 'Garment image (one garment best)' },
  ],
  limits: { maxBytes: 25 * MB, minSide: 64, maxSide: 6000, formats: [] },
  options: tryOnOptions,
  examples: ['imgtool try-on --person me.jpg --garment shirt.jpg', "imgtool try-on --person 'people/*.jpg' --garment dress.png -o out/"],
  cost: () => 3,
  costNote: `3 credits, +${EXTRACTION_CREDITS} when the garment must be extracted from a photo with a person or other objects (known only after analysis; estimates assume 3)`,
  outputExt: () => 'jpg',
  load: async () => (await import('./pipeline.js')).run,
});

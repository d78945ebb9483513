import { z } from 'zod';
import type { ErrorCode } from '../../errors.js';
import { defineOperation, MB, type JobErrorShape } from '../define.js';
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

/** The spec's closed enum for try-on job errors (interface.md, try-on job status). */
const TRY_ON_ERROR_CODES = [
  'invalid_parameter',
  'content_filter_error',
  'request_timeout',
  'job_expired',
  'job_cancelled',
  'unexpected_error',
  'service_unavailable',
] as const;
type TryOnErrorCode = (typeof TRY_ON_ERROR_CODES)[number];

/** imgtool's codes onto the closed enum: input problems become invalid_parameter, internal ones unexpected_error. */
function tryOnErrorCode(code: ErrorCode): TryOnErrorCode {
  if ((TRY_ON_ERROR_CODES as readonly string[]).includes(code)) return code as TryOnErrorCode;
  if (code === 'internal_error' || code === 'model_missing') return 'unexpected_error';
  return 'invalid_parameter';
}

const tryOnJobError: JobErrorShape = {
  schema: z.object({ message: z.string(), error_code: z.enum(TRY_ON_ERROR_CODES) }),
  format: (code, message) => ({ message, error_code: tryOnErrorCode(code) }),
};

/**
 * Dress a person photo in a garment photo (beta).
 * @example imgtool try-on --person me.jpg --garment shirt.jpg
 */
export const tryOn = defineOperation({
  name: 'try-on',
  path: '/v1/try-on',
  jobPath: '/v1/try-on/job',
  summary: 'Try a garment on a person image (beta; best on tops)',
  description:
    "A classical render for previews, best on a frontal photo and a top: fits the garment to the person's pose (collar, shoulders, sleeves along the arms, hem), lights it with the photo's shading and colour treatment, keeps arms and hands in front. A dress without sleeves is drawn over the person's own top, which stays above and beside its bodice. Not photoreal: for photoreal results use --remote with a server that runs a photoreal try-on model. Output JPEG the size of the person image; meta.warnings flags side views and heavily occluded torsos.",
  mode: 'sync-or-async',
  bodies: ['json', 'multipart'],
  jobError: tryOnJobError,
  acceptsImageResponse: false,
  inputs: [
    {
      key: 'person',
      kind: 'image',
      urlField: 'person_image_url',
      fileField: 'person_image',
      inlineBase64: true,
      description: 'Person image (one person, plain background best)',
    },
    {
      key: 'garment',
      kind: 'image',
      urlField: 'garment_image_url',
      fileField: 'garment_image',
      inlineBase64: true,
      description:
        "Garment image: a cut-out, a photo of it laid flat, or a photo of someone wearing it (taken from the most prominent person, in that person's pose; one garment best)",
    },
  ],
  limits: { maxBytes: 25 * MB, minSide: 64, maxSide: 6000, formats: [] },
  options: tryOnOptions,
  examples: ['imgtool try-on --person me.jpg --garment shirt.jpg', "imgtool try-on --person 'people/*.jpg' --garment dress.png -o out/"],
  cost: () => 3,
  costNote: `3 credits, +${EXTRACTION_CREDITS} when the garment must be extracted from a photo with a person or other objects (known only after analysis; estimates assume 3)`,
  outputExt: () => 'jpg',
  load: async () => (await import('./pipeline.js')).run,
});

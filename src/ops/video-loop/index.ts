import { z } from 'zod';
import { defineOperation, MB } from '../define.js';
import { booleanField, choiceField, numberField, stringField } from '../fields.js';
import { imageInput } from '../common.js';

const RESOLUTIONS = ['480p', '768p', '1080p'] as const;
const CREDITS_PER_SECOND: Record<(typeof RESOLUTIONS)[number], number> = { '480p': 8, '768p': 16, '1080p': 32 };

export const videoLoopOptions = z.object({
  prompt: stringField('Creative direction for the motion (camera moves, cuts and new objects are ignored)', 1000).optional(),
  duration: numberField({
    min: 5,
    max: 15,
    int: true,
    description: 'Length of the loop in whole seconds',
    expected: 'a whole number of seconds between 5 and 15',
  }).default(5),
  resolution: choiceField(RESOLUTIONS, 'Output height; width follows the image aspect').default('1080p'),
  include_audio: booleanField('Add a quiet ambient track that loops seamlessly').default(false),
  motion: choiceField(['subtle', 'spin'] as const, 'subtle: gentle movement back to the start; spin: one full revolution').default('subtle'),
  seed: numberField({ min: 0, max: 2 ** 31 - 1, int: true, description: 'Random seed (imgtool extension)' })
    .optional()
    .meta({ extension: true }),
});

export type VideoLoopOptions = z.output<typeof videoLoopOptions>;

/**
 * Turn one still into a seamless looping MP4 with a fixed camera.
 * @example imgtool video-loop photo.jpg --duration 8 --resolution 768p
 */
export const videoLoop = defineOperation({
  name: 'video-loop',
  path: '/v1/video/loop',
  jobPath: '/v1/video/loop/job',
  summary: 'Make a seamless looping MP4 from one still image',
  description: 'Animates the subject and scene with periodic motion that returns to the first frame. H.264 MP4.',
  mode: 'async',
  bodies: ['json', 'multipart'],
  // The spec's video endpoints take JSON: local images go inline, so any v1 server understands.
  uploadEncoding: 'json',
  acceptsImageResponse: false,
  inputs: [imageInput({ inlineBase64: true })],
  limits: { maxBytes: 25 * MB, minSide: 64, maxSide: 6000, formats: ['jpeg', 'png'] },
  options: videoLoopOptions,
  examples: ['imgtool video-loop photo.jpg --duration 8 --resolution 768p --motion subtle', 'imgtool video-loop product.png --motion spin --resolution 480p'],
  cost: (o) => o.duration * CREDITS_PER_SECOND[o.resolution],
  costNote: 'per second of output: 480p 8, 768p 16, 1080p 32',
  outputExt: () => 'mp4',
  load: async () => (await import('./pipeline.js')).run,
});

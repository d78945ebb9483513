import { z } from 'zod';
import { defineOperation, MB, type Limits } from '../define.js';
import { choiceField } from '../fields.js';

const OUTPUT_FORMATS = ['mp4_h264', 'mp4_h265', 'webm_vp9', 'mov_h265', 'mov_proresks', 'mkv_h264', 'mkv_h265', 'mkv_vp9', 'gif'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];
const TRANSPARENT_FORMATS: readonly OutputFormat[] = ['webm_vp9', 'mov_h265', 'mov_proresks', 'gif'];
export const FORMAT_EXT: Record<OutputFormat, string> = {
  mp4_h264: 'mp4',
  mp4_h265: 'mp4',
  webm_vp9: 'webm',
  mov_h265: 'mov',
  mov_proresks: 'mov',
  mkv_h264: 'mkv',
  mkv_h265: 'mkv',
  mkv_vp9: 'mkv',
  gif: 'gif',
};

export const videoRemoveBackgroundOptions = z
  .object({
    background_color: z
      .string({ error: 'must be "transparent", "#RGB" or "#RRGGBB"' })
      .regex(/^(transparent|#[0-9a-fA-F]{3}|#[0-9a-fA-F]{6})$/, 'must be "transparent", "#RGB" or "#RRGGBB"')
      .optional()
      .describe('Background: "transparent" (default for webm_vp9, mov_h265, mov_proresks, gif) or a colour (default #FFFFFF otherwise)'),
    output_format: choiceField(OUTPUT_FORMATS, 'Output container and codec').default('mp4_h264'),
    model: choiceField(['u2netp', 'isnet'] as const, 'Segmentation model (imgtool extension)')
      .default('u2netp')
      .meta({ extension: true }),
  })
  .refine((o) => o.background_color !== 'transparent' || TRANSPARENT_FORMATS.includes(o.output_format), {
    message: '{background_color} "transparent" needs {output_format} webm_vp9, mov_h265, mov_proresks or gif',
  });

const VIDEO_LIMITS: Limits = { maxBytes: 100 * MB, minSide: 64, maxSide: 4096, formats: ['mp4', 'mov', 'webm', 'mkv', 'gif'], maxDurationSec: 60 };

export type VideoRemoveBackgroundOptions = z.output<typeof videoRemoveBackgroundOptions>;

/** The effective background per decisions.md: transparent where the format can carry alpha. */
export function effectiveBackground(o: VideoRemoveBackgroundOptions): string {
  return o.background_color ?? (TRANSPARENT_FORMATS.includes(o.output_format) ? 'transparent' : '#FFFFFF');
}

/**
 * Remove the background of every frame of a video.
 * @example imgtool video-remove-background clip.mp4 --output-format webm_vp9 --background-color transparent
 */
export const videoRemoveBackground = defineOperation({
  name: 'video-remove-background',
  path: '/v1/video/remove-background',
  jobPath: '/v1/video/remove-background/job',
  summary: 'Remove the background of a video (9 output formats, transparency where the format allows)',
  description: 'Segments each frame, stabilises the mattes over time and encodes the chosen container and codec.',
  mode: 'async',
  bodies: ['json', 'multipart'],
  // The spec takes video_url in JSON; a local file still goes as multipart (imgtool serve only).
  uploadEncoding: 'json',
  acceptsImageResponse: false,
  inputs: [
    {
      key: 'video',
      kind: 'video',
      urlField: 'video_url',
      fileField: 'video',
      inlineBase64: false,
      description: 'Source video: a file, directory, glob or http(s) URL',
    },
  ],
  limits: VIDEO_LIMITS,
  options: videoRemoveBackgroundOptions,
  examples: [
    'imgtool video-remove-background clip.mp4 --output-format webm_vp9 --background-color transparent',
    "imgtool video-remove-background 'clips/*.mov' --background-color '#00ff00'",
  ],
  // The probe checks container, codec, duration and size before credits are reserved.
  inspect: async (inputs, signal) => {
    const { probeWithinLimits } = await import('./limits.js');
    return { durationSec: (await probeWithinLimits(inputs.video!, VIDEO_LIMITS, 'video-remove-background', signal)).duration };
  },
  cost: (_o, ctx) => Math.max(1, Math.ceil(ctx.durationSec ?? 1)),
  costNote: '1 credit per started second of input',
  outputExt: (o) => FORMAT_EXT[o.output_format],
  load: async () => (await import('./pipeline.js')).run,
});

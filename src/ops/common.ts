import type { InputSpec } from './define.js';

/** The image source shared by the image operations (interface.md 2.1). */
export function imageInput(opts: { inlineBase64: boolean } = { inlineBase64: true }): InputSpec {
  return {
    key: 'image',
    kind: 'image',
    urlField: 'image_url',
    fileField: 'image',
    inlineBase64: opts.inlineBase64,
    description: 'Source image: a file, directory, glob, http(s) URL, or - for stdin',
  };
}

export const IMAGE_CONTENT_TYPES: Record<string, string> = {
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  png: 'image/png',
  webp: 'image/webp',
  avif: 'image/avif',
  heic: 'image/heic',
  gif: 'image/gif',
  mp4: 'video/mp4',
  mov: 'video/quicktime',
  webm: 'video/webm',
  mkv: 'video/x-matroska',
};

export function contentTypeFor(ext: string): string {
  return IMAGE_CONTENT_TYPES[ext.toLowerCase()] ?? 'application/octet-stream';
}

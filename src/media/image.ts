import { readFile } from 'node:fs/promises';
import sharp from 'sharp';
import { ImgtoolError } from '../errors.js';
import { exifForOutput, exifTiff, insertExif, insertPngDensity, type ImageMetadata } from './metadata.js';
import type { Limits, LoadedInput } from './input.js';

/**
 * Decoding with the spec's limits: every image operation reads its input through here so that
 * size, format and resolution errors are the same codes and the same wording everywhere.
 */

export interface RawImage {
  /** Interleaved 8-bit pixels, sRGB. */
  data: Buffer;
  width: number;
  height: number;
  channels: 3 | 4;
}

export interface DecodedImage extends RawImage {
  /** Whether the source had an alpha channel (channels is then 4). */
  hasAlpha: boolean;
  /** Source format as sharp names it: jpeg, png, webp, heif, avif, gif, tiff... */
  format: string;
  /** What encodeImage carries to the output (metadata.ts). */
  metadata: ImageMetadata;
}

const FORMAT_NAMES: Record<string, string> = { jpeg: 'JPEG', png: 'PNG', webp: 'WebP', heif: 'HEIC', avif: 'AVIF', gif: 'GIF', tiff: 'TIFF', svg: 'SVG' };

export function formatName(f: string): string {
  return FORMAT_NAMES[f] ?? f.toUpperCase();
}

function humanList(items: readonly string[]): string {
  const names = items.map(formatName);
  return names.length <= 1 ? names.join('') : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
}

export function mb(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

export async function inputBytes(input: LoadedInput): Promise<Buffer> {
  if (input.data) return input.data;
  if (input.path) return readFile(input.path);
  throw new ImgtoolError('invalid_parameter', `${input.name}: no data`);
}

/** ISO-BMFF brands of HEIC/HEIF stills; sharp's prebuilt libvips cannot decode HEVC. */
function isHeic(buf: Buffer): boolean {
  if (buf.length < 12 || buf.toString('latin1', 4, 8) !== 'ftyp') return false;
  const brand = buf.toString('latin1', 8, 12);
  return ['heic', 'heix', 'hevc', 'hevx', 'heim', 'heis', 'mif1', 'msf1'].includes(brand);
}

async function decodeHeic(buf: Buffer, name: string): Promise<{ data: Buffer; width: number; height: number }> {
  try {
    const { default: decode } = await import('heic-decode');
    const img = await decode({ buffer: buf });
    return { data: Buffer.from(img.data.buffer, img.data.byteOffset, img.data.byteLength), width: img.width, height: img.height };
  } catch (err) {
    throw new ImgtoolError('invalid_image', `${name} looks like HEIC but could not be decoded; convert it to JPEG or PNG`, { cause: err });
  }
}

export function checkSize(input: LoadedInput, limits: Limits, op: string): void {
  if (input.size === 0) throw new ImgtoolError('invalid_image', `${input.name} is empty (0 bytes); give a JPEG, PNG or other image file`);
  if (input.size > limits.maxBytes) {
    throw new ImgtoolError('file_size_too_large', `${input.name} is ${mb(input.size)}; ${op} accepts at most ${mb(limits.maxBytes)}: shrink or recompress it`);
  }
}

export function checkDimensions(name: string, width: number, height: number, limits: Limits, op: string): void {
  // Too large first: a 10001x10 strip is refused for its width, the limit that protects memory.
  if (width > limits.maxSide || height > limits.maxSide) {
    throw new ImgtoolError(
      'image_too_large',
      `${name} is ${width}x${height}; ${op} accepts at most ${limits.maxSide}x${limits.maxSide} px: downscale it first`,
    );
  }
  if (width < limits.minSide || height < limits.minSide) {
    throw new ImgtoolError('image_too_small', `${name} is ${width}x${height}; ${op} needs at least ${limits.minSide}x${limits.minSide} px`);
  }
}

/**
 * Reads, validates and decodes an image input: EXIF orientation applied, converted to sRGB,
 * 3 channels, or 4 when the source has alpha (grey and palette images are expanded).
 */
export async function decodeImage(input: LoadedInput, limits: Limits, op: string): Promise<DecodedImage> {
  checkSize(input, limits, op);
  const buf = await inputBytes(input);
  if (isHeic(buf)) {
    if (limits.formats.length && !limits.formats.includes('heif')) {
      throw new ImgtoolError('unsupported_format', `${input.name} is HEIC; ${op} accepts ${humanList(limits.formats)}`);
    }
    const heic = await decodeHeic(buf, input.name);
    checkDimensions(input.name, heic.width, heic.height, limits, op);
    const { data, info } = await sharp(heic.data, { raw: { width: heic.width, height: heic.height, channels: 4 } })
      .removeAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    // heic-decode gives pixels only; HEIC metadata is not carried over.
    return { data, width: info.width, height: info.height, channels: 3, hasAlpha: false, format: 'heif', metadata: {} };
  }

  let meta: sharp.Metadata;
  try {
    // Header only, so no pixel limit: a 20000x20000 image must reach checkDimensions (image_too_large), not fail here.
    meta = await sharp(buf, { limitInputPixels: false }).metadata();
  } catch (err) {
    throw new ImgtoolError(
      'invalid_image',
      `${input.name} is not a decodable image (${(err as Error).message.split('\n')[0]}); check the file is a real JPEG, PNG, WebP, HEIC or AVIF`,
      { cause: err },
    );
  }
  const format = meta.format ?? 'unknown';
  if (limits.formats.length && !limits.formats.includes(format)) {
    throw new ImgtoolError('unsupported_format', `${input.name} is ${formatName(format)}; ${op} accepts ${humanList(limits.formats)}`);
  }
  // Orientations 5-8 swap the axes once the EXIF rotation is applied.
  const swap = (meta.orientation ?? 1) >= 5;
  const width = swap ? meta.height! : meta.width!;
  const height = swap ? meta.width! : meta.height!;
  checkDimensions(input.name, width, height, limits, op);

  const hasAlpha = Boolean(meta.hasAlpha);
  try {
    let pipeline = sharp(buf, { failOn: 'truncated', limitInputPixels: false }).rotate().toColourspace('srgb');
    pipeline = hasAlpha ? pipeline.ensureAlpha() : pipeline.removeAlpha();
    const { data, info } = await pipeline.raw().toBuffer({ resolveWithObject: true });
    const metadata: ImageMetadata = { exif: exifTiff(meta.exif), density: meta.density };
    return { data, width: info.width, height: info.height, channels: info.channels as 3 | 4, hasAlpha, format, metadata };
  } catch (err) {
    throw new ImgtoolError(
      'invalid_image',
      `${input.name} could not be decoded (${(err as Error).message.split('\n')[0]}); the file may be truncated or corrupt`,
      { cause: err },
    );
  }
}

/** JPEG/WebP quality when the caller gives none: high enough that upscaled detail survives. */
export const DEFAULT_QUALITY = 92;

export type OutputFormat = 'jpeg' | 'png' | 'webp';

export interface EncodeOptions {
  /** JPEG/WebP quality 1-100 (default DEFAULT_QUALITY); PNG ignores it. */
  quality?: number;
  /** The input's metadata to carry over (from DecodedImage.metadata). */
  metadata?: ImageMetadata;
  /** Write no ICC profile, EXIF or density. */
  stripMetadata?: boolean;
  /** zlib level for PNG (default 6). */
  pngCompression?: number;
}

/**
 * Encodes a sharp pipeline whose pixels are sRGB (or a grey mask), with the metadata rules of
 * metadata.ts: tagged sRGB, EXIF and DPI from the input, unless stripMetadata. JPEG uses 4:4:4
 * chroma so upscaled colour edges stay sharp.
 */
export async function encodeSharp(
  s: sharp.Sharp,
  format: OutputFormat,
  size: { width: number; height: number; channels: number },
  opts: EncodeOptions = {},
): Promise<Buffer> {
  const quality = opts.quality ?? DEFAULT_QUALITY;
  const keep = !opts.stripMetadata;
  // A one-band mask is not a colour image: no colour profile for it, and its density is
  // written below (sharp's withMetadata would attach sRGB and make it three-band).
  const colour = size.channels >= 3;
  if (keep && colour) s = s.withIccProfile('srgb');
  if (keep && colour && opts.metadata?.density) s = s.withMetadata({ density: opts.metadata.density });
  if (format === 'png') s = s.png({ compressionLevel: opts.pngCompression ?? 6 });
  else if (format === 'webp') s = s.webp({ quality });
  else s = s.jpeg({ quality, chromaSubsampling: '4:4:4', mozjpeg: false });
  let out = await s.toBuffer();
  if (keep && !colour && format === 'png' && opts.metadata?.density) out = insertPngDensity(out, opts.metadata.density);
  const exif = keep && opts.metadata?.exif ? exifForOutput(opts.metadata.exif, size.width, size.height) : undefined;
  if (exif) out = insertExif(out, format, exif, { width: size.width, height: size.height, hasAlpha: size.channels === 4 || size.channels === 2 });
  return out;
}

/** Encodes raw sRGB pixels; JPEG flattens alpha onto white. */
export async function encodeImage(img: RawImage, format: OutputFormat, opts: EncodeOptions = {}): Promise<Buffer> {
  let s = sharp(img.data, { raw: { width: img.width, height: img.height, channels: img.channels } });
  let channels: number = img.channels;
  if (format === 'jpeg' && img.channels === 4) {
    s = s.flatten({ background: '#ffffff' });
    channels = 3;
  }
  return encodeSharp(s, format, { width: img.width, height: img.height, channels }, opts);
}

/** EncodeOptions from an operation's `quality` / `strip_metadata` options and its input's metadata. */
export function encodeOptionsFor(options: { quality?: number; strip_metadata?: boolean }, metadata: ImageMetadata | undefined): EncodeOptions {
  return { quality: options.quality, stripMetadata: options.strip_metadata, metadata };
}

import { z } from 'zod';

/**
 * Field builders shared by the operation schemas. Every value may arrive as a string
 * (CLI argv, multipart form fields), so each builder coerces the obvious string forms first
 * and then validates the real type; messages say what was expected, and the validator adds
 * what was received.
 */

function coerceNumber(v: unknown): unknown {
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return v;
}

function coerceBoolean(v: unknown): unknown {
  if (typeof v === 'string') {
    const s = v.trim().toLowerCase();
    if (s === 'true' || s === '1' || s === 'yes') return true;
    if (s === 'false' || s === '0' || s === 'no') return false;
  }
  return v;
}

/** JSON objects arrive as strings in multipart forms and on the command line. */
function coerceObject(v: unknown): unknown {
  if (typeof v === 'string' && v.trim().startsWith('{')) {
    try {
      return JSON.parse(v);
    } catch {
      return v;
    }
  }
  return v;
}

export interface NumberField {
  min: number;
  max: number;
  int?: boolean;
  description: string;
  /** Override for the human range shown in messages, e.g. "an integer between 5 and 15". */
  expected?: string;
}

export function numberField(f: NumberField) {
  const expected = f.expected ?? `${f.int ? 'an integer' : 'a number'} between ${f.min} and ${f.max}`;
  let inner = z.number({ error: `must be ${expected}` });
  if (f.int) inner = inner.int({ error: `must be ${expected}` });
  inner = inner.min(f.min, { error: `must be ${expected}` }).max(f.max, { error: `must be ${expected}` });
  return z.preprocess(coerceNumber, inner).describe(f.description);
}

export function choiceField<const T extends readonly (string | number)[]>(values: T, description: string) {
  const expected = values.length <= 2 ? values.join(' or ') : `one of ${values.join(', ')}`;
  const literals = values.map((v) => z.literal(v, { error: `must be ${expected}` })) as unknown as [z.ZodLiteral<T[number]>, ...z.ZodLiteral<T[number]>[]];
  const inner = z.union(literals, { error: `must be ${expected}` });
  const numeric = values.every((v) => typeof v === 'number');
  return z.preprocess(numeric ? coerceNumber : (v) => v, inner).describe(description);
}

export function booleanField(description: string) {
  return z.preprocess(coerceBoolean, z.boolean({ error: 'must be true or false' })).describe(description);
}

export function stringField(description: string, maxLength?: number) {
  let inner = z.string({ error: 'must be a string' });
  if (maxLength !== undefined) inner = inner.max(maxLength, { error: `must be at most ${maxLength} characters` });
  return inner.describe(description);
}

export function objectField<S extends z.ZodObject>(shape: S, description: string) {
  return z.preprocess(coerceObject, shape).describe(description);
}

export { coerceBoolean, coerceNumber, coerceObject };

/**
 * Output options shared by the image operations (imgtool extensions). The encoder that uses
 * them is src/media/image.ts encodeImage; docs/metadata.md says what is kept.
 */
export function qualityField() {
  return numberField({ min: 1, max: 100, int: true, description: 'JPEG/WebP output quality 1-100 (imgtool extension)' }).default(92).meta({ extension: true });
}

export function stripMetadataField() {
  return booleanField(
    'Write no ICC profile, EXIF or DPI; by default the output is tagged sRGB and keeps the input EXIF (orientation applied) and DPI (imgtool extension)',
  )
    .default(false)
    .meta({ extension: true });
}

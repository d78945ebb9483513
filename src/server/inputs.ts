import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline as streamPipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import sharp from 'sharp';
import type { FastifyRequest } from 'fastify';
import { ImgtoolError } from '../errors.js';
import type { InputSpec, LoadedInput, OperationDefinition } from '../ops/define.js';
import { checkDimensions, checkSize, formatName, mb } from '../media/image.js';
import { fetchUrl } from '../media/fetch.js';

/**
 * Turns a request (JSON or multipart) into validated-shape parts: the raw option fields for the
 * operation's schema and, per input, exactly one source (URL, inline base64/data URL, or an
 * uploaded file). Uploads are size-limited while streaming; video uploads go straight to disk.
 */

export type Source =
  | { kind: 'url'; url: string }
  | { kind: 'inline'; data: Buffer }
  | { kind: 'file'; name: string; data?: Buffer; path?: string; size: number };

export interface ParsedRequest {
  fields: Record<string, unknown>;
  sources: Record<string, Source[]>;
  /** Files written while parsing; the caller deletes them when done. */
  tempFiles: string[];
}

export interface LoadContext {
  tmpDir: string;
  allowPrivateUrls: boolean;
  fetchTimeoutMs: number;
  signal?: AbortSignal;
}

const DATA_URL = /^data:([a-z0-9.+/-]+)?(;[a-z0-9=.+-]+)*;base64,/i;

function decodeInline(spec: InputSpec, value: string, maxBytes: number): Buffer {
  const body = value.replace(DATA_URL, '').replace(/\s+/g, '');
  if (!body || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(body)) {
    throw new ImgtoolError(
      'invalid_parameter',
      `${spec.fileField} must be base64 or a data URL (data:image/png;base64,...); for a remote file use ${spec.urlField}`,
      { field: spec.fileField },
    );
  }
  // Refuse before decoding: base64 is 4 chars per 3 bytes.
  if (Math.floor((body.length * 3) / 4) > maxBytes + 2) {
    throw new ImgtoolError('file_size_too_large', `${spec.fileField} decodes to more than ${mb(maxBytes)}, the limit for this operation`, {
      field: spec.fileField,
    });
  }
  return Buffer.from(body, 'base64');
}

export function parseJsonBody(op: OperationDefinition, body: unknown): ParsedRequest {
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ImgtoolError('invalid_parameter', 'the request body must be a JSON object (or multipart/form-data)');
  }
  const fields: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  const sources: Record<string, Source[]> = {};
  for (const spec of op.inputs) {
    const list: Source[] = [];
    const url = fields[spec.urlField];
    const inline = fields[spec.fileField];
    delete fields[spec.urlField];
    delete fields[spec.fileField];
    if (url !== undefined && url !== null && url !== '') {
      if (typeof url !== 'string') throw new ImgtoolError('invalid_parameter', `${spec.urlField} must be a string URL`, { field: spec.urlField });
      list.push({ kind: 'url', url });
    }
    if (inline !== undefined && inline !== null && inline !== '') {
      if (!spec.inlineBase64 || typeof inline !== 'string') {
        throw new ImgtoolError(
          'invalid_parameter',
          spec.inlineBase64
            ? `${spec.fileField} must be a base64 string or data URL`
            : `${spec.fileField} cannot be sent inline in JSON; give ${spec.urlField} or upload it as multipart/form-data`,
          { field: spec.fileField },
        );
      }
      list.push({ kind: 'inline', data: decodeInline(spec, inline, op.limits.maxBytes) });
    }
    sources[spec.key] = list;
  }
  return { fields, sources, tempFiles: [] };
}

/** Counts bytes through a stream and fails it the moment they pass the limit. */
function limiter(max: number, field: string): Transform {
  let n = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, cb) {
      n += chunk.length;
      if (n > max) cb(new ImgtoolError('file_size_too_large', `${field} is larger than ${mb(max)}, the limit for this operation`, { status: 413, field }));
      else cb(null, chunk);
    },
  });
}

export async function parseMultipart(op: OperationDefinition, req: FastifyRequest, tmpDir: string): Promise<ParsedRequest> {
  const fields: Record<string, unknown> = {};
  const sources: Record<string, Source[]> = Object.fromEntries(op.inputs.map((s) => [s.key, [] as Source[]]));
  const tempFiles: string[] = [];
  const max = op.limits.maxBytes;
  try {
    // busboy stops at fileSize + 1 so an oversized file is detected without buffering it all.
    for await (const part of req.parts({ limits: { fileSize: max + 1, files: op.inputs.length + 1, fields: 50, fieldSize: 1024 * 1024 } })) {
      if (part.type === 'file') {
        const spec = op.inputs.find((s) => s.fileField === part.fieldname);
        if (!spec) {
          part.file.resume();
          throw new ImgtoolError(
            'invalid_parameter',
            `unexpected file field "${part.fieldname}"; ${op.path} takes ${op.inputs.map((s) => s.fileField).join(', ')}`,
            { field: part.fieldname },
          );
        }
        const name = part.filename || spec.fileField;
        if (spec.kind === 'video') {
          const path = join(tmpDir, `${randomUUID()}.upload`);
          tempFiles.push(path);
          await streamPipeline(part.file, limiter(max, spec.fileField), createWriteStream(path, { mode: 0o600 }));
          sources[spec.key]!.push({ kind: 'file', name, path, size: (await stat(path)).size });
        } else {
          const chunks: Buffer[] = [];
          let size = 0;
          for await (const chunk of part.file as AsyncIterable<Buffer>) {
            size += chunk.length;
            if (size > max) {
              part.file.destroy();
              throw new ImgtoolError('file_size_too_large', `${spec.fileField} is larger than ${mb(max)}, the limit for ${op.name}`, {
                status: 413,
                field: spec.fileField,
              });
            }
            chunks.push(chunk);
          }
          if (part.file.truncated)
            throw new ImgtoolError('file_size_too_large', `${spec.fileField} is larger than ${mb(max)}, the limit for ${op.name}`, {
              status: 413,
              field: spec.fileField,
            });
          sources[spec.key]!.push({ kind: 'file', name, data: Buffer.concat(chunks, size), size });
        }
      } else {
        const value = part.value;
        const urlSpec = op.inputs.find((s) => s.urlField === part.fieldname);
        const inlineSpec = op.inputs.find((s) => s.fileField === part.fieldname);
        if (urlSpec) {
          if (typeof value === 'string' && value !== '') sources[urlSpec.key]!.push({ kind: 'url', url: value });
        } else if (inlineSpec) {
          if (!inlineSpec.inlineBase64)
            throw new ImgtoolError('invalid_parameter', `${inlineSpec.fileField} must be uploaded as a file`, { field: inlineSpec.fileField });
          if (typeof value === 'string' && value !== '') sources[inlineSpec.key]!.push({ kind: 'inline', data: decodeInline(inlineSpec, value, max) });
        } else {
          fields[part.fieldname] = value;
        }
      }
    }
  } catch (err) {
    await Promise.all(tempFiles.map((f) => unlink(f).catch(() => {})));
    if (err instanceof ImgtoolError) throw err;
    const code = (err as { code?: string }).code;
    if (code === 'FST_REQ_FILE_TOO_LARGE')
      throw new ImgtoolError('file_size_too_large', `upload is larger than ${mb(max)}, the limit for ${op.name}`, { status: 413 });
    if (code === 'FST_FILES_LIMIT' || code === 'FST_FIELDS_LIMIT' || code === 'FST_PARTS_LIMIT')
      throw new ImgtoolError('invalid_parameter', `too many parts in the form; ${op.path} takes one file per input`);
    throw new ImgtoolError('invalid_parameter', `malformed multipart/form-data body (${(err as Error).message})`, { cause: err });
  }
  return { fields, sources, tempFiles };
}

/** The exactly-one-source rule of decisions.md, per input; an optional input may have none. */
export function pickSources(op: OperationDefinition, parsed: ParsedRequest): Record<string, Source> {
  const out: Record<string, Source> = {};
  for (const spec of op.inputs) {
    const list = parsed.sources[spec.key] ?? [];
    const names = spec.inlineBase64 || spec.kind === 'video' ? `${spec.urlField} or ${spec.fileField}` : spec.urlField;
    if (list.length === 0 && spec.optional) continue;
    if (list.length === 0)
      throw new ImgtoolError('invalid_parameter', `${names} is required: give exactly one source for the ${spec.key}`, { field: spec.urlField });
    if (list.length > 1)
      throw new ImgtoolError('invalid_parameter', `give exactly one of ${spec.urlField} or ${spec.fileField} for the ${spec.key}, not ${list.length}`, {
        field: spec.urlField,
      });
    out[spec.key] = list[0]!;
  }
  return out;
}

/** Fetches URL sources (SSRF-guarded) and wraps every source as the pipelines' LoadedInput. */
export async function loadSources(
  op: OperationDefinition,
  sources: Record<string, Source>,
  ctx: LoadContext,
  tempFiles: string[],
): Promise<Record<string, LoadedInput>> {
  const loaded: Record<string, LoadedInput> = {};
  for (const spec of op.inputs) {
    const src = sources[spec.key];
    if (!src) continue;
    if (src.kind === 'url') {
      const toFile = spec.kind === 'video' ? join(ctx.tmpDir, `${randomUUID()}.download`) : undefined;
      if (toFile) tempFiles.push(toFile);
      const got = await fetchUrl(src.url, {
        maxBytes: op.limits.maxBytes,
        urlCode: spec.kind === 'video' ? 'invalid_video_url' : 'invalid_image_url',
        field: spec.urlField,
        allowPrivate: ctx.allowPrivateUrls,
        timeoutMs: ctx.fetchTimeoutMs,
        signal: ctx.signal,
        toFile,
        userAgent: 'imgtool-server',
      });
      loaded[spec.key] = { name: src.url, data: got.data, path: got.file, size: got.size };
    } else if (src.kind === 'inline') {
      loaded[spec.key] = { name: spec.fileField, data: src.data, size: src.data.length };
    } else {
      loaded[spec.key] = { name: src.name, data: src.data, path: src.path, size: src.size };
    }
  }
  return loaded;
}

function looksLikeHeic(buf: Buffer): boolean {
  return buf.length >= 12 && buf.toString('latin1', 4, 8) === 'ftyp';
}

/**
 * Checks an image's size, format and dimensions from its header before credits are reserved
 * or a job is queued, so a bad input is a 400 now rather than a failed job later. The
 * pipelines' decodeImage makes the same checks with the same codes.
 */
export async function precheckImage(op: OperationDefinition, input: LoadedInput): Promise<void> {
  checkSize(input, op.limits, op.name);
  const buf = input.data!;
  let meta: sharp.Metadata;
  try {
    // Header only, so no pixel limit: an oversized image gets image_too_large from checkDimensions below.
    meta = await sharp(buf, { limitInputPixels: false }).metadata();
  } catch (err) {
    if (looksLikeHeic(buf)) return;
    throw new ImgtoolError(
      'invalid_image',
      `${input.name} is not a decodable image (${(err as Error).message.split('\n')[0]}); send a JPEG, PNG, WebP, HEIC or AVIF`,
      { cause: err },
    );
  }
  const format = meta.format ?? 'unknown';
  if (op.limits.formats.length && !op.limits.formats.includes(format)) {
    throw new ImgtoolError('unsupported_format', `${input.name} is ${formatName(format)}; ${op.name} accepts ${op.limits.formats.map(formatName).join(', ')}`);
  }
  const swap = (meta.orientation ?? 1) >= 5;
  checkDimensions(input.name, swap ? meta.height! : meta.width!, swap ? meta.width! : meta.height!, op.limits, op.name);
}

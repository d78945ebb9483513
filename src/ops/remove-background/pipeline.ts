import sharp from 'sharp';
import { ImgtoolError, throwIfAborted } from '../../errors.js';
import { decodeImage, encodeOptionsFor, encodeSharp } from '../../media/image.js';
import type { Pipeline } from '../define.js';
import { cutoutSubject } from '../../vision/cutout/cutout.js';
import { alphaBox, expand, extractRegion, marginsGiven, resolveMargins, unionBox, type Box } from './crop.js';
import { removeBackground, shadowEnabled, type RemoveBackgroundOptions } from './index.js';
import { renderShadow, type ShadowLayer, type ShadowParams } from './shadow.js';

function shadowParams(shadow: RemoveBackgroundOptions['shadow']): ShadowParams | undefined {
  if (!shadowEnabled(shadow)) return undefined;
  if (shadow === true) return { opacity: 0.5, size: 0.3, x: -0.3, y: -0.6, z: 0.7 };
  if (shadow === false) return undefined;
  const { opacity, light_source: l } = shadow;
  return { opacity, size: l.size, ...l.position };
}

/** The subject (RGBA at the frame 0,0..w,h) over its black shadow, on the union of both. */
function compositeOverShadow(rgba: Uint8Array, w: number, h: number, shadow: ShadowLayer): { data: Uint8Array; box: Box } {
  const box = unionBox({ left: 0, top: 0, width: w, height: h }, shadow.box);
  const out = new Uint8Array(box.width * box.height * 4);
  const sb = shadow.box;
  for (let y = 0; y < box.height; y++) {
    const iy = y + box.top;
    const sy = iy - sb.top;
    for (let x = 0; x < box.width; x++) {
      const ix = x + box.left;
      const sx = ix - sb.left;
      const sa = sy >= 0 && sy < sb.height && sx >= 0 && sx < sb.width ? shadow.alpha[sy * sb.width + sx] / 255 : 0;
      const o = (y * box.width + x) * 4;
      if (ix >= 0 && iy >= 0 && ix < w && iy < h) {
        const i = (iy * w + ix) * 4;
        const fa = rgba[i + 3] / 255;
        const A = fa + sa * (1 - fa);
        if (A > 0) {
          // The shadow is black, so it only adds coverage; the colour is the subject's, premultiplied out.
          out[o] = Math.round((rgba[i] * fa) / A);
          out[o + 1] = Math.round((rgba[i + 1] * fa) / A);
          out[o + 2] = Math.round((rgba[i + 2] * fa) / A);
          out[o + 3] = Math.round(A * 255);
        }
      } else {
        out[o + 3] = Math.round(sa * 255);
      }
    }
  }
  return { data: out, box };
}

/**
 * remove-background: segmentation + edge refinement + decontamination (cutoutSubject), then
 * the optional ground shadow, crop to the subject (and its shadow) with margins, and PNG output.
 */
export const run: Pipeline<RemoveBackgroundOptions> = async (job, ctx) => {
  const o = job.options;
  const op = removeBackground;
  const input = job.inputs.image;
  if (!input) throw new ImgtoolError('invalid_parameter', 'remove-background needs an image input', { field: 'image' });
  const progress = (fraction: number, stage: string) => ctx.onProgress({ fraction, stage });

  if (!o.crop && marginsGiven(o)) ctx.warn('margins apply only with crop; ignoring them (add --crop to use them)');
  const shadow = shadowParams(o.shadow);
  if (o.mask_only && shadow) ctx.warn('shadow is ignored with mask_only: the mask is the subject alone');
  if (o.mask_only && o.background_color) ctx.warn('background_color is ignored with mask_only');

  progress(0, 'decode');
  const img = await decodeImage(input, op.limits, op.name);
  throwIfAborted(ctx.signal);
  progress(0.1, 'segment');
  const { rgba, mask, parts, people } = await cutoutSubject(img, { model: o.model, keep: o.keep, signal: ctx.signal });
  throwIfAborted(ctx.signal);
  const { width: w, height: h } = img;

  let canvas: Uint8Array;
  let canvasBox: Box = { left: 0, top: 0, width: w, height: h };
  let channels: 1 | 4;
  if (o.mask_only) {
    canvas = mask;
    channels = 1;
  } else if (shadow) {
    progress(0.75, 'shadow');
    const layer = await renderShadow(mask, w, h, shadow);
    if (layer) ({ data: canvas, box: canvasBox } = compositeOverShadow(rgba.data, w, h, layer));
    else canvas = rgba.data;
    channels = 4;
  } else {
    canvas = rgba.data;
    channels = 4;
  }
  throwIfAborted(ctx.signal);

  // Without crop the output keeps the input's frame (a shadow past the edge is clipped);
  // with crop the box holds the subject and its visible shadow, so the canvas may grow.
  let region: Box = { left: 0, top: 0, width: w, height: h };
  if (o.crop) {
    const coverage = channels === 1 ? canvas : alphaPlane(canvas);
    const subject = alphaBox(coverage, canvasBox.width, canvasBox.height, channels === 4 && shadow ? 8 : 1);
    if (!subject) {
      ctx.warn(`${input.name}: no subject found, so nothing to crop to; writing the full frame`);
    } else {
      const inImage = { ...subject, left: subject.left + canvasBox.left, top: subject.top + canvasBox.top };
      region = expand(inImage, resolveMargins(o, w, h));
      if (region.width > op.limits.maxSide || region.height > op.limits.maxSide) {
        throw new ImgtoolError(
          'invalid_parameter',
          `margins make the output ${region.width}x${region.height}; at most ${op.limits.maxSide} px per side: use smaller margins`,
          { field: 'margin' },
        );
      }
    }
  }
  const pixels = extractRegion(canvas, canvasBox.width, canvasBox.height, channels, {
    ...region,
    left: region.left - canvasBox.left,
    top: region.top - canvasBox.top,
  });

  progress(0.9, 'encode');
  let out = sharp(pixels, { raw: { width: region.width, height: region.height, channels } });
  if (o.mask_only) out = out.toColourspace('b-w');
  else if (o.background_color) out = out.flatten({ background: o.background_color });
  // Level 2 is ~3x faster than 6 for ~5% larger files (measured on 640x480 cut-outs).
  const data = await encodeSharp(
    out,
    'png',
    { width: region.width, height: region.height, channels },
    { ...encodeOptionsFor(o, img.metadata), pngCompression: 2 },
  );
  progress(1, 'done');
  return {
    ext: 'png',
    contentType: 'image/png',
    data,
    credits: op.cost(o, {}),
    // parts: the connected regions kept (input pixels, largest first), so a user can see a lost or extra part.
    // people: how many people's body masks were added to the cut-out (limbs the salient models lost).
    meta: { width: region.width, height: region.height, model: o.model, keep: o.keep, parts, people, crop: o.crop ? region : undefined },
  };
};

function alphaPlane(rgba: Uint8Array): Uint8Array {
  const n = rgba.length / 4;
  const a = new Uint8Array(n);
  for (let i = 0; i < n; i++) a[i] = rgba[i * 4 + 3];
  return a;
}

/**
 * Layer separation for the loop: a premultiplied subject layer, and a background plate in which
 * the pixels the subject covered are filled, so that any motion of the subject reveals clean
 * background instead of a ghost of itself.
 */

export interface Layers {
  width: number;
  height: number;
  /** The first frame: the input resized (flattened on white when it had alpha), RGB. */
  base: Uint8Array;
  /** Background with the subject's pixels filled (push-pull), RGB. */
  plate: Uint8Array;
  /** Subject colour premultiplied by alpha, RGB; all zero when there is no subject. */
  subject: Uint8Array;
  /** Subject alpha, one byte per pixel. */
  alpha: Uint8Array;
  /** Subject bounding box (inclusive), or null when no subject was found. */
  box: { x0: number; y0: number; x1: number; y1: number } | null;
}

/** Alpha-weighted bounding box of pixels with alpha above `min`. */
function maskBox(alpha: Uint8Array, width: number, height: number, min = 8): Layers['box'] {
  let x0 = width,
    y0 = height,
    x1 = -1,
    y1 = -1;
  for (let y = 0; y < height; y++) {
    const row = y * width;
    for (let x = 0; x < width; x++) {
      if (alpha[row + x]! > min) {
        if (x < x0) x0 = x;
        if (x > x1) x1 = x;
        if (y < y0) y0 = y;
        y1 = y;
      }
    }
  }
  return x1 < 0 ? null : { x0, y0, x1, y1 };
}

/**
 * Fills unknown pixels (weight 0) from known ones (weight 1) by push-pull: a weighted image
 * pyramid is built down to one pixel, then each level borrows from the bilinearly upsampled
 * coarser level exactly where it has no data. Smooth, hole-size independent, O(pixels).
 */
function pushPullFill(rgb: Uint8Array, known: Float32Array, width: number, height: number): Uint8Array {
  type Level = { w: number; h: number; c: Float32Array; a: Float32Array };
  const first: Level = { w: width, h: height, c: new Float32Array(width * height * 3), a: Float32Array.from(known) };
  for (let i = 0, n = width * height; i < n; i++) {
    const k = known[i]!;
    first.c[i * 3] = rgb[i * 3]! * k;
    first.c[i * 3 + 1] = rgb[i * 3 + 1]! * k;
    first.c[i * 3 + 2] = rgb[i * 3 + 2]! * k;
  }
  const levels: Level[] = [first];
  // Push: premultiplied 2x2 box sums; weights saturate at 1 so dense areas do not dominate.
  while (levels.at(-1)!.w > 1 || levels.at(-1)!.h > 1) {
    const f = levels.at(-1)!;
    const w = Math.max(1, Math.ceil(f.w / 2)),
      h = Math.max(1, Math.ceil(f.h / 2));
    const c = new Float32Array(w * h * 3),
      a = new Float32Array(w * h);
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        let sa = 0,
          sr = 0,
          sg = 0,
          sb = 0;
        for (let dy = 0; dy < 2; dy++) {
          const yy = 2 * y + dy;
          if (yy >= f.h) continue;
          for (let dx = 0; dx < 2; dx++) {
            const xx = 2 * x + dx;
            if (xx >= f.w) continue;
            const j = yy * f.w + xx;
            sa += f.a[j]!;
            sr += f.c[j * 3]!;
            sg += f.c[j * 3 + 1]!;
            sb += f.c[j * 3 + 2]!;
          }
        }
        const o = y * w + x;
        const scale = sa > 1 ? 1 / sa : 1;
        a[o] = sa * scale;
        c[o * 3] = sr * scale;
        c[o * 3 + 1] = sg * scale;
        c[o * 3 + 2] = sb * scale;
      }
    }
    levels.push({ w, h, c, a });
  }
  // Pull: composite each level over the upsampled coarser one (premultiplied "over").
  for (let l = levels.length - 2; l >= 0; l--) {
    const f = levels[l]!,
      g = levels[l + 1]!;
    for (let y = 0; y < f.h; y++) {
      const gy = Math.min(g.h - 1, Math.max(0, (y - 0.5) / 2));
      const y0 = Math.floor(gy),
        y1 = Math.min(g.h - 1, y0 + 1),
        fy = gy - y0;
      for (let x = 0; x < f.w; x++) {
        const o = y * f.w + x;
        const fa = f.a[o]!;
        if (fa >= 1) continue;
        const gx = Math.min(g.w - 1, Math.max(0, (x - 0.5) / 2));
        const x0 = Math.floor(gx),
          x1 = Math.min(g.w - 1, x0 + 1),
          fx = gx - x0;
        const w00 = (1 - fx) * (1 - fy),
          w10 = fx * (1 - fy),
          w01 = (1 - fx) * fy,
          w11 = fx * fy;
        const i00 = y0 * g.w + x0,
          i10 = y0 * g.w + x1,
          i01 = y1 * g.w + x0,
          i11 = y1 * g.w + x1;
        const ga = g.a[i00]! * w00 + g.a[i10]! * w10 + g.a[i01]! * w01 + g.a[i11]! * w11;
        const rest = 1 - fa;
        for (let ch = 0; ch < 3; ch++) {
          const gc = g.c[i00 * 3 + ch]! * w00 + g.c[i10 * 3 + ch]! * w10 + g.c[i01 * 3 + ch]! * w01 + g.c[i11 * 3 + ch]! * w11;
          f.c[o * 3 + ch] += gc * rest;
        }
        f.a[o] = fa + ga * rest;
      }
    }
  }
  const out = new Uint8Array(width * height * 3);
  for (let i = 0, n = width * height; i < n; i++) {
    const a = first.a[i]!;
    if (a <= 0) continue;
    out[i * 3] = first.c[i * 3]! / a;
    out[i * 3 + 1] = first.c[i * 3 + 1]! / a;
    out[i * 3 + 2] = first.c[i * 3 + 2]! / a;
  }
  return out;
}

/** Separable running maximum (binary dilation for a square of side 2r+1). */
function dilate(mask: Uint8Array, width: number, height: number, r: number): Uint8Array {
  const tmp = new Uint8Array(mask.length),
    out = new Uint8Array(mask.length);
  for (let y = 0; y < height; y++) {
    const row = y * width;
    for (let x = 0; x < width; x++) {
      let m = 0;
      for (let k = Math.max(0, x - r), e = Math.min(width - 1, x + r); k <= e; k++) if (mask[row + k]! > m) m = mask[row + k]!;
      tmp[row + x] = m;
    }
  }
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      let m = 0;
      for (let k = Math.max(0, y - r), e = Math.min(height - 1, y + r); k <= e; k++) if (tmp[k * width + x]! > m) m = tmp[k * width + x]!;
      out[y * width + x] = m;
    }
  }
  return out;
}

/**
 * Builds the layers from the first frame and the subject's alpha.
 * Pixels with any subject alpha are filled in the plate; everything else is the frame itself,
 * so where nothing moves the plate (and so every frame) is the input exactly.
 */
export function buildLayers(base: Uint8Array, alpha: Uint8Array | null, width: number, height: number): Layers {
  const n = width * height;
  if (!alpha) {
    return { width, height, base, plate: base, subject: new Uint8Array(n * 3), alpha: new Uint8Array(n), box: null };
  }
  const known = new Float32Array(n);
  // The fill draws only on pixels at least 2 px clear of the subject: the first pixels outside
  // a cut-out still carry its colour (anti-aliasing, compression ringing) and would smear it
  // into the hole as a ghost.
  const clear = dilate(alpha, width, height, 2);
  for (let i = 0; i < n; i++) known[i] = clear[i] === 0 ? 1 : 0;
  const box = maskBox(alpha, width, height);
  const plate = box ? pushPullFill(base, known, width, height) : base.slice();
  const subject = new Uint8Array(n * 3);
  for (let i = 0; i < n; i++) {
    const a = alpha[i]!;
    // Outside the subject the plate is the frame itself, so still areas render the input exactly.
    if (a === 0) {
      plate[i * 3] = base[i * 3]!;
      plate[i * 3 + 1] = base[i * 3 + 1]!;
      plate[i * 3 + 2] = base[i * 3 + 2]!;
      continue;
    }
    // Premultiplied subject colour from the matting equation against our own plate,
    // I = S + (1 - a) B, so that at rest subject-over-plate reproduces the input and a moving
    // edge carries no fringe of the old background (the plate is that background).
    const k = 1 - a / 255;
    for (let c = 0; c < 3; c++) {
      const j = i * 3 + c;
      let s = base[j]! - k * plate[j]!;
      subject[j] = Math.round(Math.min(a, Math.max(0, s)));
    }
  }
  return { width, height, base, plate, subject, alpha, box };
}

/**
 * How plain the background around the subject is: the mean per-channel standard deviation
 * (0..255) of the ring between 1% and 5% of the short side outside the subject. A studio
 * backdrop or a flattened transparent background measures a few units; a real setting tens.
 */
export function ringDeviation(layers: Layers): number {
  // Measured on a point-sampled copy about 200 px on its short side: the statistic does not
  // need detail and the dilations stay cheap at 1080p.
  const step = Math.max(1, Math.floor(Math.min(layers.width, layers.height) / 200));
  const width = Math.ceil(layers.width / step),
    height = Math.ceil(layers.height / step);
  const alpha = new Uint8Array(width * height),
    base = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const s = y * step * layers.width + x * step,
        d = y * width + x;
      alpha[d] = layers.alpha[s]!;
      base[d * 3] = layers.base[s * 3]!;
      base[d * 3 + 1] = layers.base[s * 3 + 1]!;
      base[d * 3 + 2] = layers.base[s * 3 + 2]!;
    }
  }
  const short = Math.min(width, height);
  const near = dilate(alpha, width, height, Math.max(1, Math.round(short * 0.01)));
  const far = dilate(alpha, width, height, Math.max(2, Math.round(short * 0.05)));
  let n = 0;
  const sum = [0, 0, 0],
    sq = [0, 0, 0];
  for (let i = 0; i < width * height; i++) {
    if (far[i]! > 8 && near[i]! <= 8) {
      n++;
      for (let c = 0; c < 3; c++) {
        const v = base[i * 3 + c]!;
        sum[c]! += v;
        sq[c]! += v * v;
      }
    }
  }
  if (n < 16) return Infinity;
  let dev = 0;
  for (let c = 0; c < 3; c++) dev += Math.sqrt(Math.max(0, sq[c]! / n - (sum[c]! / n) ** 2));
  return dev / 3;
}

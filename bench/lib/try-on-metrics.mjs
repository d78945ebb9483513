// The try-on measures of issue 20, shared by bench/try-on.mjs and test/ops/try-on/landmarks.test.ts.
// All take RGB byte images of the same size (the person photo and the try-on output), the
// dressed person's mask (0..255) and BlazePose landmarks in image pixels ([x, y, visibility]).

/** A pixel counts as changed (garment drawn there) when a channel moved by more than this. */
export const CHANGED = 24;

function diff(a, b, i) {
  return Math.max(Math.abs(a[i] - b[i]), Math.abs(a[i + 1] - b[i + 1]), Math.abs(a[i + 2] - b[i + 2]));
}

/** Share of the shoulder-hip quadrilateral (landmarks 11, 12, 24, 23) whose pixels `set` (0/1 per pixel) holds. */
export function quadShare(set, landmarks, width, height) {
  const quad = [11, 12, 24, 23].map((k) => [landmarks[k][0], landmarks[k][1]]);
  let n = 0,
    hit = 0;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (!inPoly(quad, x + 0.5, y + 0.5)) continue;
      n++;
      if (set[y * width + x]) hit++;
    }
  }
  return n ? hit / n : 0;
}

/** Inside test for a convex polygon of [x, y] points (any winding). */
function inPoly(q, x, y) {
  let sign = 0;
  for (let k = 0; k < q.length; k++) {
    const [ax, ay] = q[k],
      [bx, by] = q[(k + 1) % q.length];
    const c = (bx - ax) * (y - ay) - (by - ay) * (x - ax);
    if (c === 0) continue;
    const s = Math.sign(c);
    if (sign && s !== sign) return false;
    sign = s;
  }
  return true;
}

/**
 * Forearms and hands BlazePose is sure of (elbow -> wrist -> index / pinky / thumb tips, both
 * ends at visibility >= 0.9), as capsules 0.16 shoulder widths wide around the bones, inside
 * the person mask: what try-on deliberately keeps in front of the garment (pose.ts draws bare
 * or clothed forearms and hands over it). A predicate on pixel centres.
 */
function limbsInFront(landmarks, mask, width) {
  const L = (k) => landmarks[k];
  const sw = Math.hypot(L(11)[0] - L(12)[0], L(11)[1] - L(12)[1]);
  const r = 0.16 * sw;
  const segs = [];
  for (const [e, w, fingers] of [
    [13, 15, [19, 17, 21]],
    [14, 16, [20, 18, 22]],
  ]) {
    for (const [a, b] of [[e, w], ...fingers.map((f) => [w, f])]) if (L(a)[2] >= 0.9 && L(b)[2] >= 0.9) segs.push([L(a), L(b)]);
  }
  return (x, y) => {
    if (mask[Math.floor(y) * width + Math.floor(x)] < 128) return false;
    for (const [[ax, ay], [bx, by]] of segs) {
      const dx = bx - ax,
        dy = by - ay;
      const t = Math.max(0, Math.min(1, ((x - ax) * dx + (y - ay) * dy) / Math.max(1e-6, dx * dx + dy * dy)));
      if (Math.hypot(x - ax - t * dx, y - ay - t * dy) <= r) return true;
    }
    return false;
  };
}

/**
 * Whether pixel (x, y) of meta.face's box is face: the whole box, or with `mouth_y` (the head
 * shaped by landmarks, src/ops/try-on/head.ts) the box down to the mouth row and, below it, the
 * half-ellipse inscribed in the box's lower part, one pixel in from its edge (the occluder's
 * feathered rim).
 */
export function inFace(face) {
  if (face.mouth_y == null) return () => true;
  const cx = face.x + (face.width - 1) / 2;
  const a = (face.width - 1) / 2 - 1,
    b = face.y + face.height - 1 - face.mouth_y - 1;
  return (x, y) => {
    if (y <= face.mouth_y) return true;
    if (a <= 0 || b <= 0) return false;
    const u = (x - cx) / a,
      v = (y - face.mouth_y) / b;
    return u * u + v * v <= 1;
  };
}

/**
 * The face the face measures guard, inside the head shape (inFace): every row down to the eye
 * row (landmarks 2 and 5); below it, each row's span between the leftmost and rightmost pixel of
 * the face's skin, widened by 1 px either side. The face's skin: the largest 4-connected blob of
 * isSkin pixels in the shape below the eye row whose chroma (Cb, Cr) lies within 15 of the median
 * of the isSkin pixels between the eye and mouth rows (the colour rule also passes a collar's
 * yellow trim; the same rule as skin.ts faceSkinOnly). The shape is the face landmarks' extent,
 * so a head tilted to the shoulder (messi5.jpg) holds the old jersey beside the jaw below the
 * eyes, which the renderer covers (issue 35, round 10: it is clothing, not face). With too
 * little skin (under 20% of the shape below the eye row: a greyscale photo) the whole shape.
 */
export function faceRegion(ref, width, face, landmarks) {
  const shape = inFace(face);
  if (face.mouth_y == null || !landmarks) return shape;
  const eyeY = Math.round((landmarks[2][1] + landmarks[5][1]) / 2);
  const { x: bx, y: by, width: bw, height: bh } = face;
  const y0 = Math.max(by, eyeY);
  const lab = new Int32Array(bw * bh);
  let area = 0;
  const blobs = [];
  const chroma = (x, y) => {
    const i = (y * width + x) * 3;
    const [r, g, b] = [ref[i], ref[i + 1], ref[i + 2]];
    return [128 - 0.168736 * r - 0.331264 * g + 0.5 * b, 128 + 0.5 * r - 0.418688 * g - 0.081312 * b];
  };
  const rawSkin = (x, y) => {
    const i = (y * width + x) * 3;
    return isSkin(ref[i], ref[i + 1], ref[i + 2]);
  };
  const cbs = [],
    crs = [];
  for (let y = y0; y <= Math.min(by + bh - 1, face.mouth_y); y++) {
    for (let x = bx; x < bx + bw; x++) {
      if (!shape(x, y) || !rawSkin(x, y)) continue;
      const [cb, cr] = chroma(x, y);
      cbs.push(cb);
      crs.push(cr);
    }
  }
  if (cbs.length < 50) return shape;
  const mid = (v) => v.sort((a, b) => a - b)[v.length >> 1];
  const cb0 = mid(cbs),
    cr0 = mid(crs);
  const skinAt = (x, y) => {
    if (!rawSkin(x, y)) return false;
    const [cb, cr] = chroma(x, y);
    return Math.hypot(cb - cb0, cr - cr0) <= 15;
  };
  for (let y = y0; y < by + bh; y++) for (let x = bx; x < bx + bw; x++) if (shape(x, y)) area++;
  for (let y = y0; y < by + bh; y++) {
    for (let x = bx; x < bx + bw; x++) {
      const k = (y - by) * bw + (x - bx);
      if (lab[k] || !shape(x, y) || !skinAt(x, y)) continue;
      const id = blobs.length + 1;
      let n = 0;
      const stack = [[x, y]];
      lab[k] = id;
      while (stack.length) {
        const [px, py] = stack.pop();
        n++;
        for (const [qx, qy] of [
          [px - 1, py],
          [px + 1, py],
          [px, py - 1],
          [px, py + 1],
        ]) {
          if (qx < bx || qx >= bx + bw || qy < y0 || qy >= by + bh) continue;
          const q = (qy - by) * bw + (qx - bx);
          if (lab[q] || !shape(qx, qy) || !skinAt(qx, qy)) continue;
          lab[q] = id;
          stack.push([qx, qy]);
        }
      }
      blobs.push(n);
    }
  }
  if (!blobs.length) return shape;
  const best = blobs.indexOf(Math.max(...blobs)) + 1;
  if (blobs[best - 1] < 0.2 * area) return shape;
  const lo = new Map(),
    hi = new Map();
  for (let y = y0; y < by + bh; y++) {
    for (let x = bx; x < bx + bw; x++) {
      if (lab[(y - by) * bw + (x - bx)] !== best) continue;
      lo.set(y, Math.min(lo.get(y) ?? x, x));
      hi.set(y, Math.max(hi.get(y) ?? x, x));
    }
  }
  return (x, y) => shape(x, y) && (y < y0 || (lo.has(y) && x >= lo.get(y) - 1 && x <= hi.get(y) + 1));
}

/**
 * inMask: share of changed pixels inside the person mask (>= 0.95 wanted);
 * quadCover: share of the shoulder-hip quadrilateral (clipped to the image) the garment
 *   changed (>= 0.75);
 * quadOriginal: share of that quadrilateral left as it was (<= 0.05), i.e. still showing the
 *   original clothing, or whatever is in front of it (hands, forearms);
 * quadOriginalFront: the same, leaving out the forearms and hands try-on keeps in front of the
 *   garment (limbsInFront) and, with a landmark-shaped face (meta.face with mouth_y), the face
 *   itself: quadOriginal counts an arm crossing the chest as "original clothing", which it is
 *   not (basketball1.png: a bare forearm across the chest, 0.13), and a chin bent below the
 *   shoulder line likewise;
 * quadFront: share of the quadrilateral those forearms, hands (and face) take;
 * faceDiff: mean absolute difference inside meta.face (the box, or the landmark head's box to
 *   the mouth row and the chin's half-ellipse below it, and below the eye row only the face's
 *   skin span: faceRegion), in levels;
 * faceNoise: the same for the person photo merely re-encoded as the output's JPEG (`jpegRef`):
 *   what "unchanged within JPEG noise" allows on this photo (1.1 on grace_hopper.jpg, 3.5 on
 *   the noisy, small-faced messi5.jpg, so one fixed bound cannot serve both);
 * faceChanged: share of those pixels changed by more than CHANGED (garment drawn there).
 * `leaveOut` (0/1 per pixel, optional): pixels left out of the quadrilateral (what the garment's
 * own design leaves uncovered: a strapped dress's shoulders and neckline, layout.ts `uncovered`).
 */
export function tryOnMeasures(ref, out, width, height, mask, landmarks, face, jpegRef = null, leaveOut = null) {
  const L = (k) => landmarks[k];
  const quad = [L(11), L(12), L(24), L(23)].map(([x, y]) => [x, y]);
  const limbs = limbsInFront(landmarks, mask, width);
  // The face kept in front counts as in front too: a head bent below the shoulder line
  // (camera.png, messi5.jpg) puts the chin inside the quadrilateral, and it is not clothing.
  const faceBox = face && face.mouth_y != null ? face : null;
  const onFace = faceBox ? inFace(faceBox) : null;
  const front = (x, y) => {
    if (onFace) {
      const fx = Math.floor(x),
        fy = Math.floor(y);
      if (fx >= faceBox.x && fy >= faceBox.y && fx < faceBox.x + faceBox.width && fy < faceBox.y + faceBox.height && onFace(fx, fy)) return true;
    }
    return limbs(x, y);
  };
  let changed = 0,
    changedIn = 0,
    quadN = 0,
    quadChanged = 0,
    frontN = 0,
    frontChanged = 0;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const p = y * width + x;
      const d = diff(ref, out, p * 3);
      if (d > CHANGED) {
        changed++;
        if (mask[p] >= 128) changedIn++;
      }
      if (inPoly(quad, x + 0.5, y + 0.5) && !leaveOut?.[p]) {
        quadN++;
        if (d > CHANGED) quadChanged++;
        if (front(x + 0.5, y + 0.5)) {
          frontN++;
          if (d > CHANGED) frontChanged++;
        }
      }
    }
  }
  let faceSum = 0,
    faceN = 0,
    noiseSum = 0,
    faceChanged = 0;
  if (face) {
    const inside = faceRegion(ref, width, face, landmarks);
    for (let y = face.y; y < face.y + face.height; y++) {
      for (let x = face.x; x < face.x + face.width; x++) {
        if (!inside(x, y)) continue;
        const i = (y * width + x) * 3;
        for (let c = 0; c < 3; c++) faceSum += Math.abs(ref[i + c] - out[i + c]);
        if (jpegRef) for (let c = 0; c < 3; c++) noiseSum += Math.abs(ref[i + c] - jpegRef[i + c]);
        if (diff(ref, out, i) > CHANGED) faceChanged++;
        faceN += 3;
      }
    }
  }
  return {
    inMask: changed ? changedIn / changed : 0,
    quadCover: quadN ? quadChanged / quadN : 0,
    quadOriginal: quadN ? 1 - quadChanged / quadN : 1,
    quadOriginalFront: quadN - frontN ? 1 - (quadChanged - frontChanged) / (quadN - frontN) : 1,
    quadFront: quadN ? frontN / quadN : 0,
    faceDiff: faceN ? faceSum / faceN : 0,
    faceNoise: faceN && jpegRef ? noiseSum / faceN : null,
    faceChanged: faceN ? (3 * faceChanged) / faceN : 0,
  };
}

/** The skin colour rule of src/ops/try-on/skin.ts (Kovac et al. RGB rule within Chai & Ngan's YCbCr box). */
export function isSkin(r, g, b) {
  const max = Math.max(r, g, b),
    min = Math.min(r, g, b);
  if (!(r > 95 && g > 40 && b > 20 && max - min > 15 && Math.abs(r - g) > 15 && r > g && r > b)) return false;
  const cb = 128 - 0.168736 * r - 0.331264 * g + 0.5 * b;
  const cr = 128 + 0.5 * r - 0.418688 * g - 0.081312 * b;
  return cb >= 77 && cb <= 127 && cr >= 135 && cr <= 173;
}

/**
 * Old clothing visible (issue 35, sixth round): quadOriginalFront with two defects of that
 * figure removed, each counted apart so the report can show them.
 * - `out` and `outInverse`: the render and the same render with the garment's colours
 *   complemented (255 - rgb, same alpha and geometry). A pixel where the garment is drawn in a
 *   colour within CHANGED of the photo's (the coat's beige on messi5's yellow "unicef" print and
 *   badge) looks unchanged in one render but not in the other: it is covered, not old clothing
 *   (`colourMatched`).
 * - Bare skin joined to the face (the skin rule, flooded 8-connected from the landmark face
 *   through unchanged skin-coloured pixels): the chin and neck below meta.face's inscribed
 *   half-ellipse, which try-on keeps in front, are skin, not old clothing (`skin`).
 * Returns shares of the shoulder-hip quadrilateral less forearms, hands and face (the
 * quadOriginalFront denominator): `shown` (what is left: old clothing), `naive` (= quadOriginalFront
 * on `out`), `colourMatched`, `skin`; and `pixels`, the left ones as [x, y] (a debug overlay).
 * `leaveOut` (0/1 per pixel, optional) as for tryOnMeasures.
 */
export function oldClothingShown(ref, out, outInverse, width, height, mask, landmarks, face, leaveOut = null) {
  const L = (k) => landmarks[k];
  const quad = [L(11), L(12), L(24), L(23)].map(([x, y]) => [x, y]);
  const limbs = limbsInFront(landmarks, mask, width);
  const faceBox = face && face.mouth_y != null ? face : null;
  const onFace = faceBox ? inFace(faceBox) : null;
  const isFace = (fx, fy) =>
    !!onFace && fx >= faceBox.x && fy >= faceBox.y && fx < faceBox.x + faceBox.width && fy < faceBox.y + faceBox.height && onFace(fx, fy);
  const n = width * height;
  // 0 outside the quad, 1 front, 2 changed, 3 colour-matched, 4 unchanged (candidate old clothing).
  const state = new Uint8Array(n);
  let denom = 0;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const p = y * width + x;
      if (!inPoly(quad, x + 0.5, y + 0.5) || leaveOut?.[p]) continue;
      if (isFace(x, y) || limbs(x + 0.5, y + 0.5)) {
        state[p] = 1;
        continue;
      }
      denom++;
      if (diff(ref, out, p * 3) > CHANGED) state[p] = 2;
      else if (outInverse && diff(ref, outInverse, p * 3) > CHANGED) state[p] = 3;
      else state[p] = 4;
    }
  }
  // Flood from the face (whole face, inside or outside the quad) through unchanged skin.
  const skinAt = (p) => isSkin(ref[p * 3], ref[p * 3 + 1], ref[p * 3 + 2]) && diff(ref, out, p * 3) <= CHANGED;
  const skin = joinedSkin(width, height, faceSeeds(faceBox, isFace, width, height), skinAt);
  let unchanged = 0,
    matched = 0,
    bare = 0;
  const pixels = [];
  for (let p = 0; p < n; p++) {
    if (state[p] === 3) {
      matched++;
      unchanged++;
    } else if (state[p] === 4) {
      unchanged++;
      if (skin[p]) bare++;
      else pixels.push([p % width, Math.floor(p / width)]);
    }
  }
  const d = Math.max(1, denom);
  return { shown: pixels.length / d, naive: unchanged / d, colourMatched: matched / d, skin: bare / d, pixels, counted: denom };
}

/** Nearest point of the polyline `pts` to (x, y): arc length `s` and distance `d`. */
function alongArm(pts, x, y) {
  let best = { s: 0, d: Infinity },
    acc = 0;
  for (let k = 0; k + 1 < pts.length; k++) {
    const [ax, ay] = pts[k],
      [bx, by] = pts[k + 1];
    const dx = bx - ax,
      dy = by - ay,
      len = Math.max(1e-6, Math.hypot(dx, dy));
    const t = Math.max(0, Math.min(1, ((x - ax) * dx + (y - ay) * dy) / (len * len)));
    const d = Math.hypot(x - ax - t * dx, y - ay - t * dy);
    if (d < best.d) best = { s: acc + t * len, d };
    acc += len;
  }
  return best;
}

/** Shoulder widths: how far above the shoulder joints' line the clothed region reaches (the shoulder tops). */
export const SHOULDER_TOP = 0.45;
/** Shoulder widths: the band beyond each joint along the shoulder line (0: the arm capsules, to the sleeve's drawn length, cover the shoulder caps; a sleeveless dress leaves them bare). */
export const SHOULDER_CAP = 0;
/** Shoulder widths: the sleeve capsule's radius around the arm's bones. */
export const ARM_RADIUS = 0.17;
/** Shoulder widths: the slices along the arm in which sleeveReach judges the sleeve drawn. */
const SLICE = 0.02;
/** A slice with fewer capsule pixels than this (an arm leaving the mask) is skipped. */
const MIN_SLICE = 4;

/**
 * Old clothing visible over the whole region the new garment should cover (issue 35, seventh
 * round): oldClothingShown only counts the shoulder-hip quadrilateral, so the old jersey above
 * the shoulder seams beside the neck and at the sleeve ends counted nowhere. The region
 * (`clothed`) is the person mask (>= 128) below the mouth row, outside the face, forearms and
 * hands kept in front, and inside any of:
 * - the quadrilateral shoulder L, shoulder R, hip R, hip L;
 * - the shoulder band: the shoulder line (widened by SHOULDER_CAP sw beyond each joint) raised
 *   by SHOULDER_TOP sw (to the shoulder tops and the neck base; the person mask and the face cut
 *   it to the body); `shoulderBand: false` leaves it out (a strapped dress leaves the shoulder
 *   tops bare); `leaveOut` (0/1 per pixel, optional): pixels left out of the region (the
 *   garment's warped neckline opening, where the photo's neck shows through);
 * - each seen arm's sleeve: a capsule of ARM_RADIUS sw around shoulder -> elbow (-> wrist, seen),
 *   from the shoulder joint out to the garment's sleeve length there: the furthest point along
 *   the arm that either render changed within the capsule (the sleeve as drawn; an old sleeve
 *   longer than the new garment's is not counted, covering it would need the bare arm painted).
 * Counted: pixels changed in neither render (`out`, `outInverse`, as oldClothingShown) that are not
 * bare skin joined to the face or to the forearms (skin rule, flooded 8-connected through unchanged
 * skin-coloured pixels from the face and from skin in the forearm capsules).
 * `sleeveOnly` (issue 35, ninth round): the sleeve's drawn length is the sleeve itself, slices
 * along the arm at least half changed from the shoulder on (sleeveReach), not the furthest changed
 * pixel, and the upper arm beyond it (within ARM_RADIUS of shoulder -> elbow) is bare arm and
 * left out of the region everywhere, the quadrilateral included: the old sleeve there shows where
 * the new garment has no sleeve (a strapped dress, the bare arm below a t-shirt's sleeve), and
 * hiding it would mean painting the bare arm. `bareArm` is the share of that bare upper arm still
 * showing old clothing (`bareArmPx` its size), reported beside it.
 * Returns `shown` (share of the region), `counted` (region size), `pixels` ([x, y]) and
 * `region` (Uint8Array, 1 in the region) for an overlay.
 */
export function oldClothingClothed(
  ref,
  out,
  outInverse,
  width,
  height,
  mask,
  landmarks,
  face,
  { shoulderBand = true, sleeveOnly = false, leaveOut = null } = {},
) {
  const L = (k) => landmarks[k];
  const sw = Math.hypot(L(11)[0] - L(12)[0], L(11)[1] - L(12)[1]);
  const quad = [L(11), L(12), L(24), L(23)].map(([x, y]) => [x, y]);
  const [sl, sr] = L(11)[0] < L(12)[0] ? [L(11), L(12)] : [L(12), L(11)];
  const ux = (sr[0] - sl[0]) / Math.max(1e-6, sw),
    uy = (sr[1] - sl[1]) / Math.max(1e-6, sw);
  // Up: the normal of the shoulder line pointing to smaller y.
  let nx = -uy,
    ny = ux;
  if (ny > 0) {
    nx = -nx;
    ny = -ny;
  }
  const a = [sl[0] - SHOULDER_CAP * sw * ux, sl[1] - SHOULDER_CAP * sw * uy],
    b = [sr[0] + SHOULDER_CAP * sw * ux, sr[1] + SHOULDER_CAP * sw * uy];
  const band = [a, b, [b[0] + SHOULDER_TOP * sw * nx, b[1] + SHOULDER_TOP * sw * ny], [a[0] + SHOULDER_TOP * sw * nx, a[1] + SHOULDER_TOP * sw * ny]];
  const limbs = limbsInFront(landmarks, mask, width);
  const faceBox = face && face.mouth_y != null ? face : null;
  const onFace = faceBox ? inFace(faceBox) : null;
  const isFace = (fx, fy) =>
    !!onFace && fx >= faceBox.x && fy >= faceBox.y && fx < faceBox.x + faceBox.width && fy < faceBox.y + faceBox.height && onFace(fx, fy);
  const topRow = faceBox ? faceBox.mouth_y : -1;
  const changed = (p) => diff(ref, out, p * 3) > CHANGED || (outInverse && diff(ref, outInverse, p * 3) > CHANGED);
  // Arms: shoulder -> elbow (-> wrist when seen), and the drawn sleeve's reach along each.
  const arms = [];
  for (const [s, e, w] of [
    [11, 13, 15],
    [12, 14, 16],
  ]) {
    if (L(s)[2] < 0.5 || L(e)[2] < 0.5) continue;
    const pts = [L(s), L(e)];
    if (L(w)[2] >= 0.3) pts.push(L(w));
    arms.push({ pts: pts.map(([x, y]) => [x, y]), reach: 0 });
  }
  const r = ARM_RADIUS * sw;
  if (sleeveOnly) {
    for (const arm of arms) arm.reach = sleeveReach(arm.pts, changed, width, height, mask, limbs, r, sw);
  } else {
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const p = y * width + x;
        if (mask[p] < 128 || !changed(p)) continue;
        for (const arm of arms) {
          const { s, d } = alongArm(arm.pts, x + 0.5, y + 0.5);
          if (d <= r && s > arm.reach) arm.reach = s;
        }
      }
    }
  }
  // sleeveOnly: the upper arm beyond the sleeve's reach is bare arm, inside the quadrilateral too.
  const bareArm = (cx, cy) => {
    if (!sleeveOnly) return false;
    for (const arm of arms) {
      const up = Math.hypot(arm.pts[1][0] - arm.pts[0][0], arm.pts[1][1] - arm.pts[0][1]);
      const { s, d } = alongArm(arm.pts, cx, cy);
      if (d <= r && s > arm.reach && s <= up) return true;
    }
    return false;
  };
  const bare = new Uint8Array(width * height);
  const region = new Uint8Array(width * height);
  const forearmSeeds = [];
  let denom = 0;
  for (let y = Math.max(0, topRow + 1); y < height; y++) {
    for (let x = 0; x < width; x++) {
      const p = y * width + x;
      if (mask[p] < 128 || isFace(x, y) || leaveOut?.[p]) continue;
      const cx = x + 0.5,
        cy = y + 0.5;
      if (limbs(cx, cy)) {
        forearmSeeds.push(p);
        continue;
      }
      if (bareArm(cx, cy)) {
        bare[p] = 1;
        continue;
      }
      let inside = inPoly(quad, cx, cy) || (shoulderBand && inPoly(band, cx, cy));
      if (!inside)
        for (const arm of arms) {
          const { s, d } = alongArm(arm.pts, cx, cy);
          if (d <= r && s <= arm.reach) {
            inside = true;
            break;
          }
        }
      if (!inside) continue;
      region[p] = 1;
      denom++;
    }
  }
  // Bare skin joined to the face or the forearms.
  const skinAt = (p) => isSkin(ref[p * 3], ref[p * 3 + 1], ref[p * 3 + 2]) && !changed(p);
  const seeds = faceSeeds(faceBox, isFace, width, height);
  for (const p of forearmSeeds) if (skinAt(p)) seeds.push(p);
  const skin = joinedSkin(width, height, seeds, skinAt);
  const pixels = [];
  let bareN = 0,
    bareShown = 0;
  for (let p = 0; p < width * height; p++) {
    if (region[p] && !changed(p) && !skin[p]) pixels.push([p % width, Math.floor(p / width)]);
    if (bare[p]) {
      bareN++;
      if (!changed(p) && !skin[p]) bareShown++;
    }
  }
  return {
    shown: pixels.length / Math.max(1, denom),
    counted: denom,
    pixels,
    region,
    reach: arms.map((a) => a.reach / sw),
    bareArm: bareN ? bareShown / bareN : 0,
    bareArmPx: bareN,
  };
}

/**
 * The sleeve's drawn length along the arm (`pts`, shoulder joint first): slices of SLICE sw along
 * the arm, each the capsule's pixels (radius r, in the mask, not a forearm or hand in front); the
 * reach ends at the first slice with at least MIN_SLICE pixels of which fewer than half changed.
 * The furthest changed pixel (the figure's first measure) also took the torso garment and the fill
 * band where they lie in the capsule (an arm hanging beside the body, a forearm raised across the
 * chest): the reach ran on to the wrist and the bare arm below a short sleeve counted as
 * uncovered.
 */
function sleeveReach(pts, changed, width, height, mask, limbs, r, sw) {
  const step = SLICE * sw;
  let len = 0;
  for (let k = 0; k + 1 < pts.length; k++) len += Math.hypot(pts[k + 1][0] - pts[k][0], pts[k + 1][1] - pts[k][1]);
  const n = Math.max(1, Math.ceil(len / step));
  const all = new Int32Array(n),
    hit = new Int32Array(n);
  const xs = pts.map((q) => q[0]),
    ys = pts.map((q) => q[1]);
  const x0 = Math.max(0, Math.floor(Math.min(...xs) - r)),
    x1 = Math.min(width - 1, Math.ceil(Math.max(...xs) + r));
  const y0 = Math.max(0, Math.floor(Math.min(...ys) - r)),
    y1 = Math.min(height - 1, Math.ceil(Math.max(...ys) + r));
  for (let y = y0; y <= y1; y++) {
    for (let x = x0; x <= x1; x++) {
      const p = y * width + x;
      if (mask[p] < 128 || limbs(x + 0.5, y + 0.5)) continue;
      const { s, d } = alongArm(pts, x + 0.5, y + 0.5);
      if (d > r) continue;
      const b = Math.min(n - 1, Math.floor(s / step));
      all[b]++;
      if (changed(p)) hit[b]++;
    }
  }
  let reach = 0;
  for (let b = 0; b < n; b++) {
    if (all[b] < MIN_SLICE) continue;
    if (hit[b] * 2 < all[b]) break;
    reach = Math.min(len, (b + 1) * step);
  }
  return reach;
}

/** An RGB overlay of oldClothingClothed: the photo dimmed, the region tinted blue, counted pixels magenta. */
export function clothedOverlay(ref, width, height, res) {
  const o = new Uint8Array(width * height * 3);
  for (let p = 0; p < width * height; p++) {
    for (let c = 0; c < 3; c++) o[p * 3 + c] = Math.round(ref[p * 3 + c] * 0.5);
    if (res.region[p]) o[p * 3 + 2] = Math.min(255, o[p * 3 + 2] + 90);
  }
  for (const [x, y] of res.pixels) o.set([255, 0, 255], (y * width + x) * 3);
  return o;
}

/** The face's pixels (isFace within its box), as flood seeds. */
function faceSeeds(faceBox, isFace, width, height) {
  const seeds = [];
  if (faceBox)
    for (let y = faceBox.y; y < faceBox.y + faceBox.height && y < height; y++)
      for (let x = faceBox.x; x < faceBox.x + faceBox.width && x < width; x++) if (isFace(x, y)) seeds.push(y * width + x);
  return seeds;
}

/** 0/1: the pixels where skinAt holds that are 8-connected to the seeds through such pixels (the seeds themselves are not marked). */
function joinedSkin(width, height, seeds, skinAt) {
  const skin = new Uint8Array(width * height);
  const seen = new Uint8Array(width * height);
  const stack = [...seeds];
  for (const p of stack) seen[p] = 1;
  while (stack.length) {
    const p = stack.pop();
    const x = p % width,
      y = (p - x) / width;
    for (let dy = -1; dy <= 1; dy++) {
      for (let dx = -1; dx <= 1; dx++) {
        const qx = x + dx,
          qy = y + dy;
        if (qx < 0 || qy < 0 || qx >= width || qy >= height) continue;
        const q = qy * width + qx;
        if (seen[q]) continue;
        seen[q] = 1;
        if (!skinAt(q)) continue;
        skin[q] = 1;
        stack.push(q);
      }
    }
  }
  return skin;
}

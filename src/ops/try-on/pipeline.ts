import sharp from 'sharp';
import { ImgtoolError, throwIfAborted } from '../../errors.js';
import { detectPeople, type Person, torsoTurn } from '../../engine/people.js';
import { decodeImage, encodeImage, encodeOptionsFor, type DecodedImage } from '../../media/image.js';
import type { LoadedInput, Pipeline } from '../define.js';
import { cutoutSubject, subjectMask } from '../../vision/cutout/cutout.js';
import { bareArms, paintBareArms } from './bare-arms.js';
import { type NeckColumn, neckColumn, neckColumnAlpha, type PhotoNeck, ownNeck, paintBareNeck } from './bare-neck.js';
import { backdropAtEdge } from './edge-backdrop.js';
import { shortSleeves } from './short-sleeves.js';
import { fillRemnants, sleeveRemnants } from './sleeve-remnants.js';
import { analyseBody, type BodyGeometry } from './body.js';
import { fitGarment } from './fit.js';
import { applyLandmarks, armsInFront, upperArms } from './pose.js';
import { forearmZone, HEAVY_OCCLUSION, torsoOccluded } from './in-front.js';
import { prepareGarment } from './garment.js';
import { EXTRACTION_CREDITS, tryOn, type TryOnOptions } from './index.js';
import { blurPlane, morph, plane, resizePlane, type Plane } from './raster.js';
import { edgeMatte, outlineMatte } from './matte.js';
import { colourTreatment, exposeGarment, sceneExposure, treatGarment } from './garment-light.js';
import { sceneShading, shadingAt } from './shade.js';
import { fillBand } from './fill-band.js';
import { fillBlocked, outsideNeckColumn } from './fill-blocked.js';
import { inHead } from './head.js';
import { keepLargePieces } from './fragments.js';
import { layOnPose } from './layout.js';
import { neckThrough } from './neckline.js';
import { cutHoldsTorso, trimOvershoot } from './mask-overshoot.js';
import { dressedIndex } from './dressed.js';
import { oldSleeveEnd } from './old-sleeve.js';
import { skirtClip } from './skirt.js';
import { isSideView } from './turn.js';
import { layerPlane, type WarpedLayer, warpGarment } from './warp.js';

/** Body analysis runs at this long side at most; the warp and composite run at full size. */
const BODY_SIDE = 768;

function requireInput(inputs: Record<string, LoadedInput>, key: 'person' | 'garment'): LoadedInput {
  const input = inputs[key];
  if (!input) {
    throw new ImgtoolError('invalid_parameter', `try-on needs a ${key} image: give --${key} <file or URL> (API: ${key}_image or ${key}_image_url)`, {
      field: `${key}_image`,
    });
  }
  return input;
}

/**
 * Dresses the person in the garment: person cut-out and body geometry, garment extraction and
 * landmarks, thin-plate warp, occlusion by head/hair/hands, shading transfer, JPEG out.
 */
export const run: Pipeline<TryOnOptions> = (job, ctx) => renderTryOn(job, ctx, 'scene');

/**
 * How the garment is lit: `scene` (the product: the garment photo's own light divided out, the
 * photo's colour treatment and shading applied) or `flat` (the garment's pixels as they are,
 * the template the bench and tests measure the shading against; not reachable from the CLI/API).
 */
export type TryOnLight = 'scene' | 'flat';

export async function renderTryOn(...[job, ctx, light]: [...Parameters<Pipeline<TryOnOptions>>, TryOnLight]): ReturnType<Pipeline<TryOnOptions>> {
  const { signal } = ctx;
  const opts = job.options;
  const personIn = requireInput(job.inputs, 'person');
  const garmentIn = requireInput(job.inputs, 'garment');
  if (opts.garment_mode !== 'auto') {
    ctx.warn(`garment_mode is deprecated and ignored (got "${opts.garment_mode}"): the garment type is detected from its shape`);
  }
  const progress = (fraction: number, stage: string) => ctx.onProgress({ fraction, stage });

  progress(0, 'decode');
  const person = await decodeImage(personIn, tryOn.limits, tryOn.name);
  const garmentImg = await decodeImage(garmentIn, tryOn.limits, tryOn.name);
  throwIfAborted(signal);

  progress(0.05, 'find people');
  const people = await detectPeople(person, { signal });
  throwIfAborted(signal);
  // The most prominent person facing the camera (dressed.ts).
  const dressed = dressedIndex(people);
  const subject = people[dressed];
  if (!subject) {
    throw new ImgtoolError('invalid_parameter', `no person found in ${personIn.name}; use a photo showing a person's head and shoulders at least`, {
      field: 'person_image',
    });
  }
  if (people.length > 1) {
    const which = dressed === 0 ? 'the largest' : `the largest facing the camera that the pose model is sure of, number ${dressed + 1} by size`;
    ctx.warn(`${personIn.name}: ${people.length} people found; dressing the most prominent one (${which}, at x=${subject.box.x}, y=${subject.box.y})`);
  }

  progress(0.15, 'segment person');
  // The ISNet cut-out only serves `remove_background` (the person on white); ISNet's refined mask
  // (the cut-out's, or on its own) gives the photo's edge where BlazePose's mask took in backdrop
  // (mask-overshoot.ts).
  const cut = opts.remove_background ? await cutoutSubject(person, { signal }) : null;
  const subjectEdge = cut ? cut.mask : await subjectMask(person, { signal });
  throwIfAborted(signal);

  progress(0.4, 'analyse body');
  // The body is measured on the chosen person's own mask (BlazePose's segmentation), so held
  // objects and other people do not pass for shoulders or hips.
  const { W, H, k, rgb: workRgb, alpha: workAlpha } = await workScale(person, subject.mask);
  let body: BodyGeometry;
  try {
    body = applyLandmarks(analyseBody(workRgb, W, H, workAlpha), subject, k, workRgb);
  } catch (err) {
    throw new ImgtoolError('invalid_image', `${personIn.name}: could not locate a body in the person image; use a frontal photo of one person`, {
      cause: err,
      field: 'person_image',
    });
  }
  throwIfAborted(signal);

  progress(0.5, 'garment');
  let garment: Awaited<ReturnType<typeof prepareGarment>>;
  try {
    garment = await prepareGarment(garmentImg, { preprocess: opts.preprocess_garment, signal });
  } catch (err) {
    if (err instanceof ImgtoolError) throw err;
    throw new ImgtoolError('invalid_image', `${garmentIn.name}: no garment found in the garment image; use a photo of one garment, plain background best`, {
      cause: err,
      field: 'garment_image',
    });
  }
  throwIfAborted(signal);
  // Lit once, by the scene: the garment photo's own broad light divided out, and the person
  // photo's colour treatment (greyscale, tint) and exposure (its white point) taken over.
  const treatment = colourTreatment(workRgb, body);
  const exposure = sceneExposure(workRgb, body);
  if (light === 'scene') {
    const data = exposeGarment(treatGarment(garment.delit, treatment), exposure.gain);
    garment = { ...garment, rgba: { ...garment.rgba, data: Buffer.from(data.buffer, data.byteOffset, data.byteLength) } };
  }

  progress(0.7, 'warp');
  // Tops and dresses follow the landmarks when BlazePose saw both shoulders; bottoms (and
  // bodies whose shoulders are hidden) keep the silhouette fit.
  const shouldersSeen = subject.landmarks[11]!.visibility > 0.5 && subject.landmarks[12]!.visibility > 0.5;
  // layout.ts: fitted to the landmarks, sleeves along the arms, turned with the torso. Bottoms
  // and the silhouette fit stay face-on.
  // A short sleeve reaches the end of a longer one in the photo (old-sleeve.ts).
  const posed =
    garment.kind !== 'bottom' && shouldersSeen
      ? layOnPose(garment, subject, person.width, person.height, signal, (_side, segs, own) => oldSleeveEnd(body, k, segs, own))
      : null;
  const flat = posed ? posed.flat : warpGarment(garment, fitGarment(garment, body, k), person.width, person.height, signal);
  const armSleeves = posed ? posed.armSleeves : [];
  const turn = posed ? posed.turn : torsoTurn(subject, person.width, person.height);
  const turned = posed ? posed.turned : null;
  const layer = turned ? turned.layer : flat;
  // Photos the classical render handles badly, said plainly.
  const degrees = Math.round((turn.angle * 180) / Math.PI);
  if (isSideView(subject, turn)) {
    ctx.warn(
      `${personIn.name}: the person is turned ${Math.abs(degrees)} degrees from the camera (a side view); local try-on is a classical render for frontal photos, use --remote for a photoreal result`,
    );
  }
  const forearms = forearmZone(subject, k, body);
  const occluded = torsoOccluded(subject, k, body);
  if (occluded >= HEAVY_OCCLUSION) {
    ctx.warn(
      `${personIn.name}: ${Math.round(occluded * 100)}% of the torso is behind arms or hands; the garment shows only around them (local try-on is a classical render; use --remote for a photoreal result)`,
    );
  }
  const farSleeveSide = turned?.farSleeve === 1 ? 'L' : turned?.farSleeve === 2 ? 'R' : null;
  progress(0.8, 'shade');
  // Where the garment may lie: the dressed person's mask, its edge sharpened (a narrow ramp
  // around the mask's own 50% line) so the garment follows the outline without a translucent
  // fringe over the background.
  // BlazePose's mask is its 256-pixel crop scaled up: its edge lies a pixel or more off the
  // photo's, and the old clothing showed as a line along the garment's edge (messi5.jpg's jersey
  // outside the mask). The mask's edge band is re-decided from the photo's colours (matte.ts).
  const guide = { data: person.data, width: person.width, height: person.height, channels: person.channels };
  const maskR = Math.max(1.5, (OUTLINE_MATTE * Math.max(subject.box.width, subject.box.height)) / 256);
  const outlineMask = outlineMatte(plane(person.width, person.height, subject.mask), guide, maskR);
  const outline = personEdge(outlineMask.data, person.width, person.height);
  // A full-size pixel's working-scale pixel (the body's planes), and whether it lies in the head shape.
  const workPixel = (i: number) => {
    const x = i % person.width,
      y = (i - x) / person.width;
    return Math.min(body.height - 1, Math.floor(y / k)) * body.width + Math.min(body.width - 1, Math.floor(x / k));
  };
  const head = body.head;
  const onHead = (i: number) => {
    if (!head) return false;
    const x = i % person.width;
    return inHead(head, Math.floor(x / k), Math.floor((i - x) / person.width / k));
  };
  // Where the mask took in backdrop beside the person (the neck's corners), the outline is taken
  // back to the photo's edge (mask-overshoot.ts); the head, hands and forearms stay.
  const kept = (i: number) => {
    const j = workPixel(i);
    return !!(forearms.data[j] || body.hands?.data[j] || onHead(i));
  };
  // Deeper where ISNet is sure of the backdrop, when it holds this person (mask-overshoot.ts).
  const beyond = cutHoldsTorso(subjectEdge, subject.landmarks, person.width, person.height);
  trimOvershoot(subjectEdge, outline, kept, body.shoulderW * k, person.width, person.height, beyond);
  const inPerson = garment.kind === 'full' ? skirtClip(outline, subject, person.width, person.height) : outline;
  const sleeveless = garment.kind === 'full' && !garment.landmarks.sleeveL && !garment.landmarks.sleeveR && shouldersSeen;
  const [shade, occCapsule, occSleeveCapsule] = await Promise.all([
    light === 'scene'
      ? sceneShading(workRgb, body, shadeExclude(body, forearms)).then((p) => shadingAt(p, person.width, person.height))
      : new Float32Array(person.width * person.height).fill(1),
    // A dress without sleeves leaves the arms bare, in front of it where they hang down. (Tops
    // are not judged by their sleeve landmarks: the coat fixture's sleeves hang against its
    // body and are not found as sleeves.)
    sleeveless
      ? Promise.all([softMask(body.occluder, person.width, person.height), featherFull(armsInFront(subject, person.width, person.height))]).then(([a, b]) =>
          plane(
            a.width,
            a.height,
            a.data.map((v, i) => Math.max(v, b.data[i]!)),
          ),
        )
      : softMask(body.occluder, person.width, person.height),
    softMask(sleeveOccluder(body), person.width, person.height),
  ]);
  throwIfAborted(signal);
  // Forearms and hands in front get a matte along the photo's own edge (matte.ts), not the
  // blurred capsule's; the head keeps at least its shape.
  const limbs = await limbZone(forearms, body.hands, MATTE_RADIUS * body.shoulderW, person.width, person.height);
  const matteR = MATTE_RADIUS * body.shoulderW * k;
  const occ = edgeMatte(occCapsule, guide, limbs, matteR, onHead);
  const occSleeve = edgeMatte(occSleeveCapsule, guide, limbs, matteR, onHead);
  // Inside the garment's neckline opening (neckline.ts) the photo's neck shows through and the
  // inner back covers the rest (old collar, background): there the occluder is the neck's skin,
  // the head shape, forearms and hands only.
  const neck = layer?.opening ? await neckPlanes(body, forearms, occ, person, k, layerPlane(layer, layer.opening, 0, person.width, person.height)) : null;
  // A dress without sleeves is worn over what the photo shows around it (the old top's
  // shoulders, collar and sleeves above and beside its bodice, like a pinafore): the band does
  // not fill there (layout.ts `uncovered`). Filled from the dress, the old clothing above the
  // bodice read as a high-necked dress up to the jaw, and the arms and torso beside it became
  // blocks and smudges of the dress's colour; painted as bare skin, they were flat panels of
  // paint (a classical render cannot undress the person).
  const aroundDress = posed?.uncovered ?? null;
  // A dress without a neckline opening (the strapped dress) leaves the neck bare: the neck's
  // skin joined to the head stays in front of its top, and the band stops at it, as at the neck
  // shown through an opening (the dress's bodice and the band covered grace_hopper's neck up to
  // the chin, a ragged turtleneck). Not for a top whose opening was not found: the skin joined
  // to the head reaches into a V-necked shirt's chest, which a top covers.
  const bareNeck = !neck && layer && garment.kind === 'full' ? neckThrough(body) : null;
  const neckSkin = bareNeck ? await softMask(bareNeck, person.width, person.height) : null;
  throwIfAborted(signal);

  progress(0.9, 'composite');
  const out = baseImage(person, cut);
  // The untouched base, for meta.region (every pixel written).
  const untouched = out.slice();
  // The photo's short sleeves: what of them lies outside the person's outline is covered by the
  // background beside it (sleeve-remnants.ts); under a sleeveless dress the sleeves become the
  // arms' bare skin (bare-arms.ts).
  const short = shortSleeves(person.data, person.channels, body, subject, k, inPerson, person.width, person.height);
  const remnants = sleeveRemnants(person.data, person.channels, body, short, k, inPerson, person.width, person.height);
  if (remnants) fillRemnants(out, remnants, inPerson, body.shoulderW * k, person.width, person.height);
  if (sleeveless)
    paintBareArms(
      out,
      bareArms(person.data, person.channels, body, short, k, inPerson, person.width, person.height),
      inPerson,
      body.shoulderW * k,
      person.width,
    );
  if (neck?.painted) {
    const { column, photo } = neck.painted;
    paintBareNeck(out, person.data, person.channels, column, body, k, photo, neck.keep, inPerson, neck.opening, person.width, person.height);
  }
  // What the garment is drawn over, for its outer edge (edge-backdrop.ts) and the share of a
  // pixel the band takes from it (fill-band.ts).
  const under = out.slice();
  // The garment's drawn alpha, for the band it does not reach (fill-band.ts).
  const cover = new Float32Array(person.width * person.height);
  // The neck shown through the opening (0..1), kept free of the band fill below.
  const neckShown = new Float32Array(person.width * person.height);
  let rx0 = Infinity,
    ry0 = Infinity,
    rx1 = -1,
    ry1 = -1;
  // The row (person space) above which the garment's top lies behind the neck: the deepest
  // start of the neckline opening. The fill band stops at the neck above it (below).
  const neckBack = layer && neck ? backOfNeck(layer) : -1;
  const draw = (l: WarpedLayer, behind = false) => {
    // Each pixel's drawn alpha first, so the pieces the outline and occluders cut off can be
    // dropped before anything is drawn (fragments.ts).
    const alpha = new Float32Array(l.width * l.height);
    const behindNeck = l.opening && neck ? aboveOpening(l) : null;
    for (let y = 0; y < l.height; y++) {
      const py = y + l.y0;
      for (let x = 0; x < l.width; x++) {
        const li = y * l.width + x;
        const ga = l.alpha[li]!;
        if (!ga) continue;
        const pi = py * person.width + x + l.x0;
        // A sleeve covers its own bare arm; the far sleeve, behind the body, does not cover
        // what is in front of the torso (the near arm, hands).
        let o = (l.sleeve[li] && !behind ? occSleeve : occ).data[pi]!;
        // Above the opening (the collar's back and the shoulders' tops behind the neck) the
        // neck stays in front as it does inside it.
        const t = l.opening && neck ? (behindNeck && y < behindNeck[x]! ? 1 : l.opening[li]! / 255) : 0;
        // No opening: the neck's skin stays in front of the garment's top.
        if (neckSkin) o = Math.max(o, neckSkin.data[pi]!);
        if (t > 0 && neck) {
          const shown = neck.through.data[pi]!;
          o = (1 - t) * o + t * Math.max(shown, Math.min(o, neck.keep.data[pi]!));
          neckShown[pi] = Math.max(neckShown[pi]!, (t * shown) / 255);
        }
        // Worn, the garment lies on the body: it ends at the person's outline (a sleeve cut
        // flat would stick out into the air where the arm hangs down).
        alpha[li] = ((ga * (255 - o)) / (255 * 255)) * inPerson[pi]!;
      }
    }
    const keep = keepLargePieces(alpha, l.width, l.height, MIN_PIECE);
    for (let y = 0; y < l.height; y++) {
      const py = y + l.y0;
      for (let x = 0; x < l.width; x++) {
        const li = y * l.width + x;
        const a = keep[li] ? alpha[li]! : 0;
        if (a <= 0) continue;
        const px = x + l.x0,
          pi = py * person.width + px;
        cover[pi] = 1 - (1 - cover[pi]!) * (1 - a);
        // Lit no brighter than the brightest channel allows (a clipped channel shifts hue).
        const top = Math.max(l.rgb[li * 3]!, l.rgb[li * 3 + 1]!, l.rgb[li * 3 + 2]!, 1);
        const r = Math.min(shade[pi]!, Math.max(1, 255 / top));
        for (let c = 0; c < 3; c++) {
          const gv = Math.min(255, l.rgb[li * 3 + c]! * r);
          out[pi * 3 + c] = Math.round(out[pi * 3 + c]! * (1 - a) + gv * a);
        }
        if (px < rx0) rx0 = px;
        if (px > rx1) rx1 = px;
        if (py < ry0) ry0 = py;
        if (py > ry1) ry1 = py;
      }
    }
  };
  // The far sleeve first, so the body of the garment covers it where the torso is in front.
  for (const a of armSleeves) if (a.side === farSleeveSide) draw(a.layer, true);
  if (layer) draw(layer);
  for (const a of armSleeves) if (a.side !== farSleeveSide) draw(a.layer);
  let region = rx1 >= 0 ? { x: rx0, y: ry0, width: rx1 - rx0 + 1, height: ry1 - ry0 + 1 } : null;
  if (region) {
    // The band the garment does not reach, inside the outline and not in front: filled from
    // the garment, so the old clothing does not show around it.
    const block = fillBlocked(body, forearms, upperArms(subject, k));
    const allow = (i: number) => {
      const y = Math.floor(i / person.width);
      const j = workPixel(i);
      // Above the opening's start the band stops at the neck too, where no garment pixel lies
      // (it ran a line of coat colour across grace_hopper.jpg's neck under the chin).
      const shown = neck && y < neckBack ? Math.max(neckShown[i]!, neck.through.data[i]! / 255) : neckShown[i]!;
      const kept = (neckSkin ? 1 - neckSkin.data[i]! / 255 : 1) * (aroundDress ? 1 - aroundDress.data[i]! / 255 : 1);
      return inPerson[i]! * (block.data[j] ? 1 - occ.data[i]! / 255 : 1) * (1 - shown) * kept;
    };
    // Pockets stay off the neck's column (fill-blocked.ts): the neckline is the garment's own.
    // Beside a painted neck they go up to the photo's own neck instead, which they do not cover:
    // the painted neck stops them, and beside it lies the collar's back (the astronaut's black
    // turtleneck showed as a wedge between her painted neck and the t-shirt's shoulder, and a
    // sliver of grace_hopper.jpg's white collar beside her neck, once the inner back the band
    // had spread from was painted skin).
    const offNeck = outsideNeckColumn(body);
    const own = neck?.painted?.photo.whole;
    const pocketWeight = (i: number) => {
      if (own) return 1 - own.data[i]! / 255;
      const x = i % person.width;
      return offNeck(x / k, (i - x) / person.width / k);
    };
    // A top whose sleeves hang down against its body (garment.ts `inner`: the coat laid flat)
    // covers the arms beside the torso as well: a wider strip of old clothing between it and the
    // outline is still its pocket (grace_hopper's far arm, 0.17 shoulder widths of dark uniform
    // beside the coat, was left fading as a smudge). Not for sleeveless or short-sleeved
    // garments: there the arms beside the torso stay as they are (a dress spread over the
    // astronaut's orange arms).
    const lmG = garment.landmarks;
    const hangingSleeves = garment.kind === 'top' && (lmG.sleeveL?.inner !== undefined || lmG.sleeveR?.inner !== undefined);
    const band = fillBand(out, cover, allow, person.width, person.height, region, {
      reach: FILL_REACH * body.shoulderW * k,
      pocket: (aroundDress ? FILL_POCKET_DRESS : hangingSleeves ? FILL_POCKET_HANGING : FILL_POCKET) * body.shoulderW * k,
      pocketWeight,
      rim: FILL_RIM * body.shoulderW * k,
      photo: under,
      light: shade,
    });
    // meta.region covers every pixel written, the band's included.
    if (band) {
      const x0 = Math.min(rx0, band.x0),
        y0 = Math.min(ry0, band.y0);
      region = { x: x0, y: y0, width: Math.max(rx1, band.x1) - x0 + 1, height: Math.max(ry1, band.y1) - y0 + 1 };
    }
    // The garment's outer edge over the backdrop, not over the old clothing's edge.
    backdropAtEdge(out, under, cover, inPerson, body.shoulderW * k, person.width, person.height, region);
    // The backdrop put back outside the outline and the bare arms lie outside the garment's box.
    region = changedBox(out, untouched, person.width, person.height, region);
  }
  if (!region) ctx.warn(`${garmentIn.name}: the fitted garment falls outside the person image; the output shows the person unchanged`);

  progress(0.95, 'encode');
  const data = await encodeImage(
    { data: Buffer.from(out.buffer, out.byteOffset, out.byteLength), width: person.width, height: person.height, channels: 3 },
    'jpeg',
    encodeOptionsFor(opts, person.metadata),
  );
  const credits = tryOn.cost(opts, {}) + (garment.extracted ? EXTRACTION_CREDITS : 0);
  ctx.onProgress({ fraction: 1, stage: 'done' });
  // The face the occluder keeps in front, in full-size pixels: without face landmarks the box
  // (rows and columns round(y0)..round(y1) at working scale); with them the head shape's
  // bounding box and its mouth row (`mouth_y`): below that row the face is the half-ellipse
  // inscribed in the box's lower part (head.ts). meta.face never claims a pixel the garment may
  // cover: the shape's pixel rows and columns, rounded inwards.
  const face = head
    ? {
        x: Math.round(Math.ceil(head.x0) * k),
        y: Math.round(Math.ceil(head.y0) * k),
        width: Math.max(1, Math.round((Math.floor(head.x1) - Math.ceil(head.x0) + 1) * k)),
        height: Math.max(1, Math.round((Math.floor(head.chinY) - Math.ceil(head.y0) + 1) * k)),
        mouth_y: Math.round(Math.floor(head.mouthY) * k),
      }
    : body.face
      ? {
          x: Math.round(Math.round(body.face.x0) * k),
          y: Math.round(Math.round(body.face.y0) * k),
          width: Math.max(1, Math.round((Math.round(body.face.x1) - Math.round(body.face.x0) + 1) * k)),
          height: Math.max(1, Math.round((Math.round(body.face.y1) - Math.round(body.face.y0) + 1) * k)),
        }
      : null;
  return {
    ext: 'jpg',
    contentType: 'image/jpeg',
    data,
    credits,
    meta: {
      width: person.width,
      height: person.height,
      garment_kind: garment.kind,
      extracted: garment.extracted,
      extraction_reasons: garment.reasons,
      region,
      face,
      people: people.length,
      dressed_person: dressed,
      // The dressed torso's turn from the camera (degrees, positive: the image-right side is far).
      // The photo's white point around the person and the gain the garment took from it (garment-light.ts).
      exposure: { white: exposure.white, gain: Math.round(exposure.gain * 1000) / 1000 },
      turn: { degrees, far_side: turn.far === 'L' ? 'left' : turn.far === 'R' ? 'right' : null },
      landmarks: landmarkMeta(subject),
      body: {
        center_x: Math.round(body.cx * k),
        shoulder_y: Math.round(body.shoulderY * k),
        shoulder_width: Math.round(body.shoulderW * k),
        neck_y: Math.round(body.neckY * k),
        waist_y: Math.round(body.waistY * k),
        hip_y: Math.round(body.hipY * k),
        full_body: body.fullBody,
      },
    },
  };
}

async function workScale(person: DecodedImage, mask: Uint8Array) {
  const k = Math.max(1, Math.max(person.width, person.height) / BODY_SIDE);
  const W = Math.max(1, Math.round(person.width / k)),
    H = Math.max(1, Math.round(person.height / k));
  const rgbBuf = await sharp(person.data, { raw: { width: person.width, height: person.height, channels: person.channels } })
    .removeAlpha()
    .resize(W, H, { fit: 'fill' })
    .raw()
    .toBuffer();
  const alpha = await resizePlane(plane(person.width, person.height, mask), W, H);
  // k is exact per axis only up to rounding; the x scale is what landmarks use.
  return { W, H, k: person.width / W, rgb: new Uint8Array(rgbBuf.buffer, rgbBuf.byteOffset, rgbBuf.byteLength), alpha };
}

/** The dressed person's BlazePose landmarks for callers: image pixels, visibility to 2 decimals. */
function landmarkMeta(p: Person): Array<[number, number, number]> {
  return p.landmarks.map((l) => [Math.round(l.x), Math.round(l.y), Math.round(l.visibility * 100) / 100]);
}

/**
 * Working-scale 0/1: what the shading estimate leaves out besides the occluder: the forearms and,
 * above the neck row and the shoulder seams' line in the head's columns (the face box and half
 * its width either side), the neck, hair and collar beside the head that the landmark head
 * (head.ts) no longer keeps in front: their albedo (skin in shadow, dark hair) is not the clothing's and pulled the estimate
 * of the light (the known-ramp gain fell from 0.73 to 0.50 in light.test.ts).
 */
function shadeExclude(body: BodyGeometry, forearms: Plane): Plane {
  const f = body.face;
  if (!f || !body.head) return forearms;
  const { width: w, height: h } = body;
  const out = new Uint8Array(forearms.data);
  const fw = f.x1 - f.x0;
  const x0 = Math.max(0, Math.floor(f.x0 - 0.5 * fw)),
    x1 = Math.min(w - 1, Math.ceil(f.x1 + 0.5 * fw));
  // Above the line through the shoulder seams too (about 0.06 shoulder widths above the joints'
  // line, where the occluder's head rule stopped): below it lie a leaning body's shoulders.
  const { shoulderL: a, shoulderR: b } = body;
  const slope = (b.y - a.y) / Math.max(1e-6, b.x - a.x);
  for (let y = 0; y < Math.min(h, Math.ceil(body.neckY)); y++) {
    for (let x = x0; x <= x1; x++) if (y <= a.y + slope * (x - a.x)) out[y * w + x] = 1;
  }
  return plane(w, h, out);
}

/** The matte's band half-width (matte.ts) and the reach of its zone beyond the limbs, in shoulder widths. */
const MATTE_RADIUS = 0.05;
/** The person mask's edge band re-decided from the photo: this many of BlazePose's mask pixels (its crop's 256th, about the person's size) either side of its 50% line. */
const OUTLINE_MATTE = 2;

/** Full-size 0/1: the forearm and hand capsules (working scale) grown by `grow` working pixels. */
async function limbZone(forearms: Plane, hands: Plane | undefined, grow: number, width: number, height: number): Promise<Plane> {
  const { width: w, height: h } = forearms;
  const both = new Uint8Array(w * h);
  for (let i = 0; i < w * h; i++) both[i] = forearms.data[i] || hands?.data[i] ? 1 : 0;
  const grown = morph(plane(w, h, both), Math.max(1, Math.ceil(grow)));
  const bytes = new Uint8Array(w * h);
  for (let i = 0; i < w * h; i++) bytes[i] = grown.data[i] ? 255 : 0;
  const up = await resizePlane(plane(w, h, bytes), width, height);
  const out = new Uint8Array(width * height);
  for (let i = 0; i < out.length; i++) out[i] = up.data[i]! >= 128 ? 1 : 0;
  return plane(width, height, out);
}

/**
 * Full-size 0..255 planes for the neckline opening (`opening`): `through`, the photo's neck and
 * head that show through it (neckline.ts) with the painted neck's column, and `keep`, what else
 * stays in front inside it: the head shape, and forearms and hands where the occluder (`occ`)
 * keeps them (BlazePose guessed grace_hopper.jpg's hands below the frame, a wedge up to her
 * collar). `painted`: the painted neck's column and the photo's own neck it is painted round
 * (bare-neck.ts), or null where none is painted. Null without a landmark head.
 */
async function neckPlanes(
  body: BodyGeometry,
  forearms: Plane,
  occ: Plane,
  person: DecodedImage,
  k: number,
  opening: Plane,
): Promise<{ through: Plane; keep: Plane; opening: Plane; painted: { column: NeckColumn; photo: PhotoNeck } | null } | null> {
  const photoNeck = neckThrough(body);
  if (!photoNeck || !body.head) return null;
  const { width, height, channels, data } = person;
  const { width: w, height: h } = body;
  const head = new Uint8Array(w * h),
    limbs = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      head[i] = inHead(body.head, x, y) ? 1 : 0;
      limbs[i] = forearms.data[i] || body.hands?.data[i] ? 1 : 0;
    }
  }
  const [photo, headIn, limbsIn] = await Promise.all([
    softMask(photoNeck, width, height),
    softMask(plane(w, h, head), width, height),
    softMask(plane(w, h, limbs), width, height),
  ]);
  const kept = plane(
    width,
    height,
    headIn.data.map((v, i) => Math.max(v, Math.min(limbsIn.data[i]!, occ.data[i]!))),
  );
  // Where old clothing covers the neck (up to the chin, or under a collar), a painted neck
  // (bare-neck.ts) shows through the opening as well.
  const column = neckColumn(body, photoNeck, (x, y) => {
    const i = (Math.min(height - 1, Math.floor((y + 0.5) * k)) * width + Math.min(width - 1, Math.floor((x + 0.5) * k))) * channels;
    return [data[i]!, data[i + 1]!, data[i + 2]!];
  });
  if (!column) return { through: photo, keep: kept, opening, painted: null };
  // Its own neck, with what the colour rule missed in it, is not painted over; what shows
  // through outside the painted column is the colour rule's skin, as before.
  const own = await softMask(column.own, width, height);
  const alpha = neckColumnAlpha(column, body, k, opening, width, height);
  const through = plane(
    width,
    height,
    photo.data.map((v, i) => Math.max(v, alpha.data[i]!)),
  );
  return { through, keep: kept, opening, painted: { column, photo: await ownNeck(own, body.shoulderW, k) } };
}

/** The deepest row (person space) at which a column of `l`'s neckline opening starts, or -1. */
function backOfNeck(l: WarpedLayer): number {
  let deepest = -1;
  for (const y of aboveOpening(l)) if (y >= 0) deepest = Math.max(deepest, y + l.y0);
  return deepest;
}

/**
 * Per column of a warped layer, where its neckline opening reaches full strength from the top
 * (the first row at 95% of the column's largest value, when that is at least 128 of 255), or -1
 * where the column has none: the garment above it lies behind the neck worn (the collar's back,
 * the shoulders' tops warped up beside the neck, which crossed grace_hopper.jpg's neck under
 * the chin as two green wedges). The opening's soft upper edge counts as above: drawn with it,
 * half the garment's colour ran as a faint line across the neck.
 */
function aboveOpening(l: WarpedLayer): Int32Array {
  const top = new Int32Array(l.width).fill(-1);
  for (let x = 0; x < l.width; x++) {
    let max = 0;
    for (let y = 0; y < l.height; y++) max = Math.max(max, l.opening![y * l.width + x]!);
    if (max < 128) continue;
    for (let y = 0; y < l.height; y++) {
      if (l.opening![y * l.width + x]! >= 0.95 * max) {
        top[x] = y;
        break;
      }
    }
  }
  return top;
}

/** Pieces of a drawn layer smaller than this share of its largest piece are dropped as fragments. */
const MIN_PIECE = 0.02;
/** The band around the garment filled from it, in shoulder widths. */
const FILL_REACH = 0.1;
/** The garment's edge this deep (shoulder widths) gives the band no colour and is blended into it. */
const FILL_RIM = 0.04;
/** A gap this wide (shoulder widths) between the garment and the person's outline or what is in front is filled whole. */
const FILL_POCKET = 0.15;
/** The same for a top whose sleeves hang against its body (they cover the arms beside the torso). */
const FILL_POCKET_HANGING = 0.2;
/**
 * The same inside a dress without sleeves, whose band stays inside its own shape (layout.ts
 * `uncovered`): a gap cut into it there (an arm in front at the astronaut's waist, a forearm
 * BlazePose guessed in front of grace_hopper.jpg's chest) is the dress, mended whole. Faded at
 * 0.15, they were smudges of the old clothing and the dress's colour, her name badge showing
 * through.
 */
const FILL_POCKET_DRESS = 0.3;

/**
 * Sleeves cover the arms: only head, hair and hands stay in front of them. Skin is exempt below
 * the neck row and, above it, beside the head's columns (the face box and half its width either
 * side): an arm raised above the neck row (messi5.jpg's, mid-kick) is still an arm. The forearm
 * capsules go whole, not only their skin: a long sleeve laid along a bare forearm had a hole
 * where the capsule held the photo's shadow in the elbow's crease (messi5.jpg's coat).
 */
function sleeveOccluder(body: BodyGeometry): Plane {
  const { width: w, height: h } = body;
  const out = new Uint8Array(w * h);
  const neckRow = Math.round(body.neckY);
  const f = body.face;
  const fw = f ? f.x1 - f.x0 : 0;
  const aside = (x: number) => !f || x < f.x0 - 0.5 * fw || x > f.x1 + 0.5 * fw;
  for (let i = 0; i < w * h; i++) {
    const x = i % w,
      y = (i - x) / w;
    const arm = body.limbs?.data[i] || (body.skin.data[i] && (y >= neckRow || aside(x)));
    out[i] = (body.occluder.data[i] && !arm) || body.hands?.data[i] ? 1 : 0;
  }
  return plane(w, h, out);
}

/** 0..1 per pixel: a smoothstep of the person mask between 35% and 65%. */
function personEdge(mask: Uint8Array, width: number, height: number): Float32Array {
  const out = new Float32Array(width * height);
  for (let i = 0; i < out.length; i++) {
    const t = Math.min(1, Math.max(0, (mask[i]! - 90) / 75));
    out[i] = t * t * (3 - 2 * t);
  }
  return out;
}

/** 0/1 full-size mask to a lightly feathered 0..255 mask. */
function featherFull(p: Plane): Promise<Plane> {
  const bytes = new Uint8Array(p.data.length);
  for (let i = 0; i < bytes.length; i++) bytes[i] = p.data[i] ? 255 : 0;
  return blurPlane(plane(p.width, p.height, bytes), Math.max(0.5, p.width / 1500));
}

/** 0/1 working-scale mask to a feathered 0..255 full-size mask. */
async function softMask(p: Plane, width: number, height: number): Promise<Plane> {
  const bytes = new Uint8Array(p.data.length);
  for (let i = 0; i < bytes.length; i++) bytes[i] = p.data[i] ? 255 : 0;
  const up = await resizePlane(plane(p.width, p.height, bytes), width, height);
  return blurPlane(up, Math.max(0.5, width / 1500));
}

/** `box` grown to take in every pixel where `out` differs from `before` (RGB, full size). */
function changedBox(out: Uint8Array, before: Uint8Array, width: number, height: number, box: { x: number; y: number; width: number; height: number }) {
  let x0 = box.x,
    y0 = box.y,
    x1 = box.x + box.width - 1,
    y1 = box.y + box.height - 1;
  for (let i = 0; i < width * height; i++) {
    if (out[i * 3] === before[i * 3] && out[i * 3 + 1] === before[i * 3 + 1] && out[i * 3 + 2] === before[i * 3 + 2]) continue;
    const x = i % width,
      y = (i - x) / width;
    if (x < x0) x0 = x;
    if (x > x1) x1 = x;
    if (y < y0) y0 = y;
    if (y > y1) y1 = y;
  }
  return { x: x0, y: y0, width: x1 - x0 + 1, height: y1 - y0 + 1 };
}

/** The untouched person (flattened on white if it had alpha), or the cut-out on white. */
function baseImage(person: DecodedImage, cut: { rgba: { data: Buffer }; mask: Uint8Array } | null): Uint8Array {
  const n = person.width * person.height;
  const out = new Uint8Array(n * 3);
  const c = person.channels;
  for (let i = 0; i < n; i++) {
    if (cut) {
      const a = cut.mask[i]! / 255;
      for (let k = 0; k < 3; k++) out[i * 3 + k] = Math.round(cut.rgba.data[i * 4 + k]! * a + 255 * (1 - a));
    } else if (c === 4) {
      const a = person.data[i * 4 + 3]! / 255;
      for (let k = 0; k < 3; k++) out[i * 3 + k] = Math.round(person.data[i * 4 + k]! * a + 255 * (1 - a));
    } else {
      out[i * 3] = person.data[i * 3]!;
      out[i * 3 + 1] = person.data[i * 3 + 1]!;
      out[i * 3 + 2] = person.data[i * 3 + 2]!;
    }
  }
  return out;
}

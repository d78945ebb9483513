// Issue 35, seventh round: the fill band reaches the old sleeve under an upper arm. The silhouette
// analysis puts dark blobs near an arm bone in front of the garment (messi5.jpg: the shadowed
// underside of the raised arm's jersey sleeve); the fill band must cover them, while skin, the
// head, forearms and hands still block it.
import { describe, expect, it } from 'vitest';
import type { BodyGeometry } from '../../../src/ops/try-on/body.js';
import { fillBlocked } from '../../../src/ops/try-on/fill-blocked.js';
import type { UpperArm } from '../../../src/ops/try-on/pose.js';
import { plane } from '../../../src/ops/try-on/raster.js';

const W = 120,
  H = 120;
// Shoulders at y 40 (x 40 and 80, shoulder width 40); the image-left arm raised out to the left.
const arm: UpperArm = { shoulder: { x: 40, y: 40 }, elbow: { x: 10, y: 35 }, wrist: { x: 2, y: 20 } };
const at = (x: number, y: number) => y * W + x;

function body(occluded: Array<[number, number]>, skin: Array<[number, number]> = []): BodyGeometry {
  const occ = new Uint8Array(W * H),
    sk = new Uint8Array(W * H);
  for (const [x, y] of occluded) occ[at(x, y)] = 1;
  for (const [x, y] of skin) sk[at(x, y)] = 1;
  return {
    width: W,
    height: H,
    face: { x0: 52, y0: 5, x1: 68, y1: 30 },
    shoulderY: 40,
    shoulderW: 40,
    shoulderL: { x: 40, y: 40 },
    shoulderR: { x: 80, y: 40 },
    occluder: plane(W, H, occ),
    skin: plane(W, H, sk),
  } as unknown as BodyGeometry;
}

describe('fill band blocking on the upper arm', () => {
  const none = plane(W, H, new Uint8Array(W * H));
  // Under the upper arm (4 px below its bone half-way out), a dark occluder pixel; beside it one of skin.
  const under: [number, number] = [25, 42],
    bare: [number, number] = [26, 42];
  // Far from any arm, on the torso: the occluder still blocks there.
  const torso: [number, number] = [60, 80];

  it('lets the band cover non-skin occluder pixels on an upper arm', () => {
    const b = body([under, bare, torso], [bare]);
    const blocked = fillBlocked(b, none, [arm]);
    expect(blocked.data[at(...under)]).toBe(0);
    expect(blocked.data[at(...bare)]).toBe(1);
    expect(blocked.data[at(...torso)]).toBe(1);
    // Without the arms (the rule before this round) the dark pixel blocks the band.
    expect(fillBlocked(b, none).data[at(...under)]).toBe(1);
  });

  it('keeps forearms and hands blocking', () => {
    const fore = new Uint8Array(W * H);
    fore[at(...under)] = 1;
    expect(fillBlocked(body([under]), plane(W, H, fore), [arm]).data[at(...under)]).toBe(1);
  });
});

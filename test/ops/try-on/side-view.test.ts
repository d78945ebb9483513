// Issue 35: meta.warnings' side-view warning. BlazePose's depth alone turned basketball1.png's
// frontal man (arms raised to a ball) 68 degrees, the same as camera.png's side view, and the
// warning fired on both; the 2D face (in profile or not) now has to agree.
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { detectPeople, type Person, torsoTurn } from '../../../src/engine/people.js';
import { isSideView, SIDE_VIEW } from '../../../src/ops/try-on/turn.js';
import { fixture } from '../../helpers.js';

async function people(name: string): Promise<{ found: Person[]; width: number; height: number }> {
  const { data, info } = await sharp(fixture(name)).toColourspace('srgb').removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const found = (await detectPeople({ data: new Uint8Array(data), width: info.width, height: info.height, channels: 3 })) as Person[];
  return { found, width: info.width, height: info.height };
}

describe('try-on side-view rule', () => {
  it('camera.png is a side view; basketball1.png frontal man is not, though his depth turn is as large', async () => {
    const cam = await people('images/camera.png');
    const c = cam.found[0]!;
    const ct = torsoTurn(c, cam.width, cam.height);
    expect(Math.abs(ct.angle)).toBeGreaterThanOrEqual(SIDE_VIEW);
    expect(isSideView(c, ct)).toBe(true);

    const bb = await people('images/basketball1.png');
    const man = bb.found.find((p) => p.box.x < 250)!;
    expect(man).toBeDefined();
    const bt = torsoTurn(man, bb.width, bb.height);
    // Depth alone would call him a side view (the old rule) ...
    expect(Math.abs(bt.angle)).toBeGreaterThanOrEqual(SIDE_VIEW);
    // ... his face, between his ears, says he faces the camera.
    expect(isSideView(man, bt)).toBe(false);
    // The man on the right, turned away, is a side view.
    const away = bb.found.find((p) => p.box.x >= 250)!;
    expect(isSideView(away, torsoTurn(away, bb.width, bb.height))).toBe(true);
  }, 120_000);

  it('a small turn is never a side view, a face unseen at a large turn is', () => {
    const lm = Array.from({ length: 33 }, () => ({ x: 50, y: 50, z: 0, visibility: 1 }));
    lm[0] = { x: 80, y: 40, z: 0, visibility: 1 }; // nose far off the ears' middle (a profile)
    lm[7] = { x: 45, y: 40, z: 0, visibility: 1 };
    lm[8] = { x: 55, y: 40, z: 0, visibility: 1 };
    expect(isSideView({ landmarks: lm }, { angle: 0.2, far: null })).toBe(false);
    expect(isSideView({ landmarks: lm }, { angle: 1.2, far: 'R' })).toBe(true);
    lm[0] = { x: 51, y: 40, z: 0, visibility: 1 };
    expect(isSideView({ landmarks: lm }, { angle: 1.2, far: 'R' })).toBe(false);
    lm[0] = { x: 51, y: 40, z: 0, visibility: 0.1 };
    expect(isSideView({ landmarks: lm }, { angle: 1.2, far: 'R' })).toBe(true);
  });
});

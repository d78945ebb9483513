import { describe, expect, it } from 'vitest';
import { type Landmark, POSE, torsoTurn } from '../../src/engine/people.js';

/** 33 landmarks at the origin, shoulders and hips set: x and z in pixels. */
function body(shoulders: [number, number, number, number], hips?: [number, number, number, number], hipVisibility = 1): { landmarks: Landmark[] } {
  const landmarks: Landmark[] = Array.from({ length: 33 }, () => ({ x: 50, y: 50, z: 0, visibility: 1 }));
  const [lx, lz, rx, rz] = shoulders;
  landmarks[POSE.leftShoulder] = { x: lx, y: 20, z: lz, visibility: 1 };
  landmarks[POSE.rightShoulder] = { x: rx, y: 20, z: rz, visibility: 1 };
  const [hlx, hlz, hrx, hrz] = hips ?? [lx, 0, rx, 0];
  landmarks[POSE.leftHip] = { x: hlx, y: 120, z: hlz, visibility: hipVisibility };
  landmarks[POSE.rightHip] = { x: hrx, y: 120, z: hrz, visibility: hipVisibility };
  return { landmarks };
}

const deg = (r: number) => (r * 180) / Math.PI;

describe('torsoTurn (from BlazePose depth)', () => {
  it('facing the camera: no turn, no far side', () => {
    const t = torsoTurn(body([100, 0, 0, 0]), 200, 200);
    expect(deg(t.angle)).toBeCloseTo(0, 5);
    expect(t.far).toBeNull();
  });

  it('shoulders 100 px apart in x, the image-right one 100 px deeper: 45 degrees, image-right far', () => {
    // Hips with the same turn: the angle is the pairs' combined atan2(dz, dx).
    const t = torsoTurn(body([0, -50, 100, 50], [10, -40, 90, 40]), 200, 200);
    expect(deg(t.angle)).toBeCloseTo(45, 3);
    expect(t.far).toBe('R');
  });

  it('mirrored: the same angle negative, image-left far', () => {
    // Image-left (x 0) now the deeper side.
    const t = torsoTurn(body([100, -50, 0, 50], [90, -40, 10, 40]), 200, 200);
    expect(deg(t.angle)).toBeCloseTo(-45, 3);
    expect(t.far).toBe('L');
  });

  it("which landmark is the person's left does not matter (facing the camera or turned away), only image sides and depth", () => {
    // The same image points, the left/right labels swapped: the same turn.
    const a = torsoTurn(body([0, -50, 100, 50]), 200, 200);
    const b = torsoTurn(body([100, 50, 0, -50]), 200, 200);
    expect(a.far).toBe('R');
    expect(b.far).toBe('R');
    expect(b.angle).toBeCloseTo(a.angle, 9);
  });

  it('hips below the frame or unseen (a bust) do not count', () => {
    // Hips claim a strong turn the other way; out of frame (y 120 >= height 100) they are ignored.
    const bust = body([0, -20, 100, 20], [0, 300, 100, -300]);
    expect(deg(torsoTurn(bust, 200, 100).angle)).toBeCloseTo(deg(Math.atan2(40, 100)), 3);
    expect(torsoTurn(bust, 200, 200).far).toBe('L');
    expect(deg(torsoTurn(body([0, -20, 100, 20], [0, 300, 100, -300], 0.1), 200, 200).angle)).toBeCloseTo(deg(Math.atan2(40, 100)), 3);
  });
});

// Issue 35: the head kept in front of the garment is shaped by the face landmarks (full width to
// the mouth, a half-ellipse to the chin), not a box whose lower corners held the old collar.
import { describe, expect, it } from 'vitest';
import { POSE } from '../../../src/engine/people.js';
import { headShape, inHead } from '../../../src/ops/try-on/head.js';

/** A frontal face: eyes at y 40, mouth at y 60 (eye-mouth 20), ears at x 30 / 70 on y 45, nose (50, 50). */
function face() {
  const L = Array.from({ length: 33 }, () => ({ x: 50, y: 50, v: 0 }));
  const set = (i: number, x: number, y: number) => {
    L[i] = { x, y, v: 1 };
  };
  set(POSE.nose, 50, 50);
  set(POSE.leftEye, 58, 40);
  set(POSE.rightEye, 42, 40);
  set(POSE.leftEar, 70, 45);
  set(POSE.rightEar, 30, 45);
  set(POSE.mouthLeft, 55, 60);
  set(POSE.mouthRight, 45, 60);
  return L;
}

describe('headShape', () => {
  it('is full width down to the mouth, then narrows to the chin at mouth + 0.6 x eye-mouth', () => {
    const s = headShape(face(), 200, 200)!;
    expect(s.mouthY).toBe(60);
    expect(s.chinY).toBeCloseTo(72, 5);
    // Full width at the ears' and mouth's rows (the landmarks' span 30..70, 15% wider each side).
    expect(inHead(s, 25, 45)).toBe(true);
    expect(inHead(s, 25, 60)).toBe(true);
    // The chin below the mouth stays in front ...
    expect(inHead(s, 50, 71)).toBe(true);
    // ... but the lower corners of the old box (to mouth + 0.7 x eye-mouth = 74) do not: that is
    // where the old collar sits beside a bent head.
    expect(inHead(s, 26, 70)).toBe(false);
    expect(inHead(s, 74, 70)).toBe(false);
    expect(inHead(s, 50, 74)).toBe(false);
    // The nape: the ears' row + 0.5 x eye-mouth.
    expect(s.napeY).toBeCloseTo(55, 5);
  });

  it('needs five face landmarks seen', () => {
    const L = face().map((p, i) => (i < 11 && i > 3 ? { ...p, v: 0 } : p));
    expect(headShape(L, 200, 200)).toBeNull();
  });
});

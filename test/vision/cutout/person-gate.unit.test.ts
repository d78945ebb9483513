import { describe, expect, it } from 'vitest';
import type { PoseDetection } from '../../../src/engine/pose-detector.js';
import { faceInside } from '../../../src/vision/cutout/person.js';

const W = 100,
  H = 80;
const find = (x: number, y: number, width: number, height: number): PoseDetection => ({ score: 0.9, box: { x, y, width, height }, keypoints: [] });

describe('remove-background people assist: the gate before the landmark model', () => {
  it('measures how much of the face box the cut-out holds, clipped to the image', () => {
    const coarse = new Uint8Array(W * H);
    for (let y = 0; y < H; y++) for (let x = 0; x < 50; x++) coarse[y * W + x] = 200;
    expect(faceInside(find(10, 10, 20, 20), coarse, W, H)).toBe(1);
    expect(faceInside(find(60, 10, 20, 20), coarse, W, H)).toBe(0);
    expect(faceInside(find(40, 10, 20, 20), coarse, W, H)).toBeCloseTo(0.5, 5);
    // Half outside the frame on the left: only the visible half counts, and it is all inside.
    expect(faceInside(find(-10, 10, 20, 20), coarse, W, H)).toBe(1);
    // Wholly outside the frame.
    expect(faceInside(find(-40, 10, 20, 20), coarse, W, H)).toBe(0);
  });
});

// Shared by the head-shape and bare-neck unit tests: BlazePose landmarks of a synthetic face.
import { POSE } from '../../../src/engine/people.js';

/** A frontal face: eyes at y 40, mouth at y 60 (eye-mouth 20), ears at x 30 / 70 on y 45, nose (50, 50); the other landmarks unseen. */
export function frontalFace(): Array<{ x: number; y: number; v: number }> {
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

// detectPeople on fixture people: one person each, landmarks where a person's anatomy puts them.
import path from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { detectPeople, POSE, type Person, torsoTurn } from '../../src/engine/people.js';
import { FIXTURES } from './fixtures.js';

async function load(file: string) {
  const { data, info } = await sharp(path.join(FIXTURES, file)).removeAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
  return { data: new Uint8Array(data), width: info.width, height: info.height, channels: 3 as const };
}

function check(p: Person, width: number, height: number) {
  const L = p.landmarks;
  expect(L).toHaveLength(33);
  expect(p.score).toBeGreaterThan(0.5);
  // Frontal portraits: the person's left shoulder is on the image's right.
  expect(L[POSE.leftShoulder]!.x).toBeGreaterThan(L[POSE.rightShoulder]!.x);
  const shoulderW = L[POSE.leftShoulder]!.x - L[POSE.rightShoulder]!.x;
  expect(shoulderW).toBeGreaterThan(0.3 * width);
  // The face is above the shoulders, the nose between them, eyes above the mouth.
  const shoulderY = (L[POSE.leftShoulder]!.y + L[POSE.rightShoulder]!.y) / 2;
  expect(L[POSE.nose]!.y).toBeLessThan(shoulderY - 0.1 * height);
  expect(L[POSE.nose]!.x).toBeGreaterThan(L[POSE.rightShoulder]!.x);
  expect(L[POSE.nose]!.x).toBeLessThan(L[POSE.leftShoulder]!.x);
  expect(L[POSE.leftEye]!.y).toBeLessThan(L[POSE.mouthLeft]!.y);
  for (const k of [POSE.nose, POSE.leftEye, POSE.rightEye, POSE.leftShoulder, POSE.rightShoulder]) expect(L[k]!.visibility).toBeGreaterThan(0.9);
  // The mask covers the nose and the point between the shoulders, not the top corners.
  const at = (x: number, y: number) => p.mask[Math.round(y) * width + Math.round(x)]!;
  expect(at(L[POSE.nose]!.x, L[POSE.nose]!.y)).toBeGreaterThan(200);
  expect(at((L[11]!.x + L[12]!.x) / 2, shoulderY)).toBeGreaterThan(200);
  expect(at(2, 2)).toBeLessThan(50);
  expect(at(width - 3, 2)).toBeLessThan(50);
  expect(p.area).toBeGreaterThan(0.2);
  expect(p.box.width).toBeGreaterThan(0.4 * width);
}

describe('detectPeople', () => {
  it('astronaut.png: one person, face, shoulders and mask in place', async () => {
    const img = await load('images/astronaut.png');
    const people = await detectPeople(img);
    expect(people).toHaveLength(1);
    check(people[0]!, img.width, img.height);
  }, 120_000);

  it('grace_hopper.jpg (a bust cut by the bottom edge): one person, face, shoulders and mask in place', async () => {
    const img = await load('images/grace_hopper.jpg');
    const people = await detectPeople(img, { model: 'lite' });
    expect(people).toHaveLength(1);
    check(people[0]!, img.width, img.height);
  }, 120_000);

  it('camera.png (side view, leaning into a camera): one person facing right, hips below shoulders, tripod not in the mask', async () => {
    const img = await load('images/camera.png');
    const people = await detectPeople(img);
    expect(people).toHaveLength(1);
    const p = people[0]!;
    const L = p.landmarks;
    for (const k of [POSE.leftShoulder, POSE.rightShoulder]) expect(L[POSE.nose]!.x).toBeGreaterThan(L[k]!.x);
    const shoulderY = (L[POSE.leftShoulder]!.y + L[POSE.rightShoulder]!.y) / 2;
    const hipY = (L[POSE.leftHip]!.y + L[POSE.rightHip]!.y) / 2;
    expect(hipY - shoulderY).toBeGreaterThan(0.2 * img.height);
    const at = (x: number, y: number) => p.mask[Math.round(y) * img.width + Math.round(x)]!;
    expect(at((L[11]!.x + L[12]!.x) / 2, shoulderY + 20)).toBeGreaterThan(200);
    // The tripod's legs and the sky stay out of the person.
    expect(at(330, 420)).toBeLessThan(50);
    expect(at(450, 30)).toBeLessThan(50);
  }, 120_000);

  it('no person: a photo of fruit gives an empty list', async () => {
    const img = await load('images/fruits.jpg');
    expect(await detectPeople(img)).toHaveLength(0);
  }, 120_000);

  it('two people side by side: two people, the bigger first', async () => {
    const a = await load('images/astronaut.png');
    const b = await sharp(path.join(FIXTURES, 'images/grace_hopper.jpg')).removeAlpha().resize(341, 400).raw().toBuffer();
    const both = await sharp({ create: { width: 1024, height: 512, channels: 3, background: '#ffffff' } })
      .composite([
        { input: Buffer.from(a.data), raw: { width: 512, height: 512, channels: 3 }, left: 0, top: 0 },
        { input: b, raw: { width: 341, height: 400, channels: 3 }, left: 600, top: 112 },
      ])
      .removeAlpha()
      .raw()
      .toBuffer();
    const people = await detectPeople({ data: new Uint8Array(both), width: 1024, height: 512, channels: 3 });
    expect(people.length).toBe(2);
    expect(people[0]!.landmarks[POSE.nose]!.x).toBeLessThan(512);
    expect(people[1]!.landmarks[POSE.nose]!.x).toBeGreaterThan(600);
  }, 120_000);

  it('two people touching (shoulders overlap): two people, not one merged silhouette', async () => {
    // The astronaut's left 370 px and its mirror image, overlapping by 30 px: one connected
    // region of the person mask, two faces for the detector.
    const src = path.join(FIXTURES, 'images/astronaut.png');
    const a = await sharp(src).removeAlpha().extract({ left: 0, top: 0, width: 370, height: 512 }).raw().toBuffer();
    const m = await sharp(src).removeAlpha().flop().extract({ left: 142, top: 0, width: 370, height: 512 }).raw().toBuffer();
    const both = await sharp({ create: { width: 710, height: 512, channels: 3, background: '#ffffff' } })
      .composite([
        { input: m, raw: { width: 370, height: 512, channels: 3 }, left: 340, top: 0 },
        { input: a, raw: { width: 370, height: 512, channels: 3 }, left: 0, top: 0 },
      ])
      .removeAlpha()
      .raw()
      .toBuffer();
    const people = await detectPeople({ data: new Uint8Array(both), width: 710, height: 512, channels: 3 });
    expect(people.length).toBe(2);
    const noses = people.map((p) => p.landmarks[POSE.nose]!.x).sort((x, y) => x - y);
    expect(noses[0]).toBeLessThan(300);
    expect(noses[1]).toBeGreaterThan(420);
    for (const p of people) expect(p.detection?.score).toBeGreaterThan(0.2);
    // Each mask is one person: the left one does not reach the right one's face.
    const left = people.find((p) => p.landmarks[POSE.nose]!.x < 355)!;
    expect(left.mask[128 * 710 + Math.round(noses[1]!)]!).toBeLessThan(128);
  }, 120_000);

  it('messi5.jpg (footballer mid-kick): the detector finds him; legs apart, kicking foot right of the hips, arms spread', async () => {
    const img = await load('images/messi5.jpg');
    const people = await detectPeople(img);
    expect(people.length).toBeGreaterThanOrEqual(1);
    const p = people[0]!;
    expect(p.detection).toBeDefined();
    const L = p.landmarks;
    const hipX = (L[POSE.leftHip]!.x + L[POSE.rightHip]!.x) / 2;
    const hipY = (L[POSE.leftHip]!.y + L[POSE.rightHip]!.y) / 2;
    const shoulderY = (L[POSE.leftShoulder]!.y + L[POSE.rightShoulder]!.y) / 2;
    expect(hipY).toBeGreaterThan(shoulderY + 50);
    // The ball is kicked by the foot far to the right (x ~ 430 of 548), the other knee is down at the left.
    const ankles = [L[POSE.leftAnkle]!, L[POSE.rightAnkle]!].sort((a, b) => a.x - b.x);
    expect(ankles[1]!.x).toBeGreaterThan(hipX + 80);
    expect(ankles[1]!.x - ankles[0]!.x).toBeGreaterThan(120);
    // Arms out: the wrists are wider apart than the shoulders by far.
    expect(Math.abs(L[POSE.leftWrist]!.x - L[POSE.rightWrist]!.x)).toBeGreaterThan(2 * Math.abs(L[POSE.leftShoulder]!.x - L[POSE.rightShoulder]!.x));
    const at = (x: number, y: number) => p.mask[Math.round(y) * img.width + Math.round(x)]!;
    expect(at((L[11]!.x + L[12]!.x + L[23]!.x + L[24]!.x) / 4, (shoulderY + hipY) / 2)).toBeGreaterThan(200);
  }, 120_000);

  it('basketball1.png (two men, one turned away): both found, the nearer, bigger one first', async () => {
    const img = await load('images/basketball1.png');
    const people = await detectPeople(img);
    expect(people.length).toBe(2);
    expect(people[0]!.landmarks[POSE.nose]!.x).toBeGreaterThan(400);
    expect(people[1]!.landmarks[POSE.nose]!.x).toBeLessThan(200);
    expect(people[0]!.area).toBeGreaterThan(people[1]!.area);
  }, 120_000);
});

describe('depth (z) and the torso turn', () => {
  it('camera.png (side view): the image-left shoulder is nearer the camera, z in pixels, the torso turned >= 45 degrees with the image-right side far; mirrored, the turn flips', async () => {
    const img = await load('images/camera.png');
    const [p] = await detectPeople(img);
    const L = p!.landmarks;
    const [near, far] =
      L[POSE.leftShoulder]!.x < L[POSE.rightShoulder]!.x ? [L[POSE.leftShoulder]!, L[POSE.rightShoulder]!] : [L[POSE.rightShoulder]!, L[POSE.leftShoulder]!];
    expect(near.z).toBeLessThan(far.z);
    // Pixels like x (not MediaPipe's 0..1 normalised units): tens to hundreds on a 512 px photo.
    expect(Math.abs(far.z - near.z)).toBeGreaterThan(20);
    expect(Math.abs(far.z - near.z)).toBeLessThan(img.width);
    const t = torsoTurn(p!, img.width, img.height);
    expect((t.angle * 180) / Math.PI).toBeGreaterThan(45);
    expect(t.far).toBe('R');

    const { data, info } = await sharp(path.join(FIXTURES, 'images/camera.png'))
      .flop()
      .removeAlpha()
      .toColourspace('srgb')
      .raw()
      .toBuffer({ resolveWithObject: true });
    const [m] = await detectPeople({ data: new Uint8Array(data), width: info.width, height: info.height, channels: 3 });
    const tm = torsoTurn(m!, info.width, info.height);
    expect((tm.angle * 180) / Math.PI).toBeLessThan(-45);
    expect(tm.far).toBe('L');
  }, 240_000);

  it('messi5.jpg (facing the camera mid-kick): the torso is turned less than 20 degrees', async () => {
    const img = await load('images/messi5.jpg');
    const [p] = await detectPeople(img);
    expect(Math.abs((torsoTurn(p!, img.width, img.height).angle * 180) / Math.PI)).toBeLessThan(20);
  }, 120_000);

  it('apollo11_crew.jpg (two men seated in front, one standing behind): the largest is seated, knees close to the hip line and both shoulders seen', async () => {
    const img = await load('images/apollo11_crew.jpg');
    const people = await detectPeople(img);
    expect(people.length).toBeGreaterThanOrEqual(2);
    const L = people[0]!.landmarks;
    const shoulderY = (L[POSE.leftShoulder]!.y + L[POSE.rightShoulder]!.y) / 2;
    const hipY = (L[POSE.leftHip]!.y + L[POSE.rightHip]!.y) / 2;
    const kneeY = (L[POSE.leftKnee]!.y + L[POSE.rightKnee]!.y) / 2;
    // Seated: thighs run forward, so the knees sit far less than a torso length below the hips
    // (standing, they are about one torso length below).
    expect(hipY - shoulderY).toBeGreaterThan(0.15 * img.height);
    expect(kneeY - hipY).toBeLessThan(0.7 * (hipY - shoulderY));
    for (const k of [POSE.leftShoulder, POSE.rightShoulder, POSE.leftHip, POSE.rightHip]) expect(L[k]!.visibility).toBeGreaterThan(0.9);
  }, 120_000);
});

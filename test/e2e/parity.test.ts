import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ffmpegPath } from '../../src/media/ffmpeg.js';
import { probeVideo } from '../../src/media/probe.js';
import { cli } from '../cli/harness.js';
import { fixture, tempDir, treeClip } from '../helpers.js';
import { startHarness, type Harness } from '../server/harness.js';
import { leaksOf, meanAbsDiff, remote, startProxy, writeImage, type Captured } from './support.js';

/**
 * Every operation with a local pipeline gives the same result through `imgtool serve` as
 * locally: same output name, format and dimensions, pixels within a small tolerance (fixed
 * seeds where the operation has one). All traffic goes through a logging proxy so the tests
 * also see what the client sent, and the server logs at info level so they can be searched.
 */

let h: Harness;
let proxy: Awaited<ReturnType<typeof startProxy>>;
const serverLog: string[] = [];
let dir: string;
const runs: { stdout: string; stderr: string }[] = [];

beforeAll(async () => {
  h = await startHarness({ credits: 1000, logger: { level: 'info', stream: { write: (line: string) => void serverLog.push(line) } } });
  proxy = await startProxy(h.url);
  dir = tempDir('imgtool-e2e-');
});
afterAll(async () => {
  await proxy?.close();
  await h?.close();
});

/** Runs the same command locally and remotely into two directories and returns both output paths. */
async function both(op: string, inputArgs: string[], flags: string[], tag = op): Promise<{ local: string; remote: string; name: string }> {
  const localDir = join(dir, `${tag}-local`);
  const remoteDir = join(dir, `${tag}-remote`);
  const l = await cli([op, ...inputArgs, '-o', localDir, ...flags], { cwd: dir });
  expect(l.code, l.stderr).toBe(0);
  const r = await remote(proxy.url, h.key, [op, ...inputArgs, '-o', remoteDir, ...flags], { cwd: dir });
  runs.push(r);
  expect(r.code, r.stderr).toBe(0);
  const names = readdirSync(localDir);
  expect(readdirSync(remoteDir)).toEqual(names);
  expect(names).toHaveLength(1);
  return { local: join(localDir, names[0]!), remote: join(remoteDir, names[0]!), name: names[0]! };
}

async function sameImage(a: string, b: string, tolerance = 2): Promise<void> {
  const [ma, mb] = await Promise.all([sharp(a).metadata(), sharp(b).metadata()]);
  expect({ format: mb.format, width: mb.width, height: mb.height, channels: mb.channels }).toEqual({
    format: ma.format,
    width: ma.width,
    height: ma.height,
    channels: ma.channels,
  });
  expect(await meanAbsDiff(a, b)).toBeLessThan(tolerance);
}

/** The captured POST for an operation path, from the proxy log. */
const posted = (path: string): Captured[] => proxy.log.filter((e) => e.method === 'POST' && e.url === path);

describe('remote results equal local results', () => {
  test('upscale (multipart upload, Accept image/*, a non-default extension sent)', async () => {
    await writeImage(dir, 'small.jpg', 'images/fruits.jpg', 64);
    const out = await both('upscale', ['small.jpg'], ['--scale', '2', '--model', 'slim']);
    expect(out.name).toBe('small.upscale.jpg');
    await sameImage(out.local, out.remote);
    const [req] = posted('/v1/upscale');
    expect(req!.headers['content-type']).toMatch(/^multipart\/form-data/);
    expect(req!.headers.accept).toBe('image/*');
    expect(req!.body.toString('latin1')).toMatch(/name="model"\r\n\r\nslim/);
    expect(req!.body.toString('latin1')).toMatch(/name="image"; filename="small.jpg"/);
  });

  test('upscale fast with a non-default --texture: sent as a form field, same result remote and local', async () => {
    await writeImage(dir, 'grain.jpg', 'images/camera.png', 64);
    const out = await both('upscale', ['grain.jpg'], ['--scale', '2', '--model', 'fast', '--texture', '0.3'], 'upscale-texture');
    await sameImage(out.local, out.remote);
    const body = posted('/v1/upscale').at(-1)!.body.toString('latin1');
    expect(body).toMatch(/name="texture"\r\n\r\n0\.3/);
  });

  test('outpaint with a fixed seed; default extensions are not sent', async () => {
    await writeImage(dir, 'scene.jpg', 'images/butterfly.jpg', 128);
    const out = await both('outpaint', ['scene.jpg'], ['--right', '32', '--bottom', '16', '--seed', '5']);
    await sameImage(out.local, out.remote);
    const body = posted('/v1/outpaint')[0]!.body.toString('latin1');
    expect(body).toMatch(/name="right"\r\n\r\n32/);
    expect(body).toMatch(/name="seed"\r\n\r\n5/);
    // creativity and output_format are spec fields and go as they are; nothing else is added.
    const names = [...body.matchAll(/; name="([^"]+)"/g)].map((m) => m[1]).sort();
    expect(names).toEqual(['bottom', 'creativity', 'image', 'left', 'output_format', 'right', 'seed', 'top']);
  });

  test('remove-background', async () => {
    await writeImage(dir, 'object.jpg', 'images/orange.jpg', 96);
    const out = await both('remove-background', ['object.jpg'], ['--model', 'u2netp']);
    expect(out.name).toBe('object.remove-background.png');
    await sameImage(out.local, out.remote);
  });

  test('generate-background with a fixed seed', async () => {
    await sharp(fixture('cutouts/sneaker.png')).resize(128, 128).png().toFile(join(dir, 'sneaker.png'));
    const out = await both('generate-background', ['sneaker.png'], ['--scene', 'marble', '--seed', '3']);
    await sameImage(out.local, out.remote);
  });

  test('try-on (two uploads, JSON answer, result downloaded from result_url)', async () => {
    await writeImage(dir, 'person.jpg', 'images/astronaut.png', 128);
    await sharp(fixture('cutouts/tshirt.png')).resize(96, 96).png().toFile(join(dir, 'tshirt.png'));
    const out = await both('try-on', [], ['--person', 'person.jpg', '--garment', 'tshirt.png']);
    await sameImage(out.local, out.remote);
    const [req] = posted('/v1/try-on');
    expect(req!.headers.accept).toBe('application/json');
    const download = proxy.log.find((e) => e.method === 'GET' && e.url.startsWith('/v1/results/'));
    expect(download).toBeDefined();
    expect(download!.headers['x-api-key']).toBeUndefined();
  });

  test('video-loop (JSON body with the image inline, job polled at Location)', async () => {
    await writeImage(dir, 'still.jpg', 'images/fruits.jpg', 160, 120);
    const out = await both('video-loop', ['still.jpg'], ['--resolution', '480p', '--duration', '5', '--seed', '1']);
    const [a, b] = await Promise.all([probeVideo(out.local, { name: 'local' }), probeVideo(out.remote, { name: 'remote' })]);
    expect({ w: b.width, h: b.height, d: Math.round(b.duration) }).toEqual({ w: a.width, h: a.height, d: Math.round(a.duration) });
    expect(await frameDiff(out.local, out.remote, 2.5)).toBeLessThan(3);
    const [req] = posted('/v1/video/loop');
    expect(req!.headers['content-type']).toBe('application/json');
    const body = JSON.parse(req!.body.toString()) as Record<string, unknown>;
    expect(typeof body.image).toBe('string');
    expect(body.resolution).toBe('480p');
    const polls = proxy.log.filter((e) => e.method === 'GET' && e.url.startsWith('/v1/video/loop/job/'));
    expect(polls.length).toBeGreaterThan(0);
  });

  test('video-remove-background of a local file (multipart video to imgtool serve)', async () => {
    const clip = join(dir, 'clip.mp4');
    treeClip(clip, { seconds: 1, size: '160x120' });
    const out = await both('video-remove-background', ['clip.mp4'], ['--background-color', '#00ff00']);
    const [a, b] = await Promise.all([probeVideo(out.local, { name: 'local' }), probeVideo(out.remote, { name: 'remote' })]);
    expect({ w: b.width, h: b.height }).toEqual({ w: a.width, h: a.height });
    expect(await frameDiff(out.local, out.remote, 0.5)).toBeLessThan(3);
    const [req] = posted('/v1/video/remove-background');
    expect(req!.headers['content-type']).toMatch(/^multipart\/form-data/);
    expect(req!.body.toString('latin1')).toMatch(/name="video"; filename="clip.mp4"/);
  });

  test('the key travels only in X-API-KEY and appears in no output or server log', () => {
    expect(proxy.log.length).toBeGreaterThan(10);
    expect(leaksOf(proxy.log, h.key)).toEqual([]);
    const authed = proxy.log.filter((e) => !e.url.startsWith('/v1/results/') && e.url !== '/openapi.json');
    for (const e of authed) expect(e.headers['x-api-key']).toBe(h.key);
    for (const r of runs) expect(r.stdout + r.stderr).not.toContain(h.key);
    expect(serverLog.length).toBeGreaterThan(0);
    expect(serverLog.join('')).not.toContain(h.key);
  });
});

/** Mean absolute difference of one frame grabbed at `t` seconds from each video. */
async function frameDiff(a: string, b: string, t: number): Promise<number> {
  const grab = (p: string) =>
    execFileSync(ffmpegPath(), ['-v', 'error', '-ss', String(t), '-i', p, '-frames:v', '1', '-f', 'image2pipe', '-vcodec', 'png', '-']);
  return meanAbsDiff(grab(a), grab(b));
}

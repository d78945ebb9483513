// Missing and corrupt models must fail with model_missing, naming the model and the fix, when
// first-use assembly is off; with it on (the default), a missing model is assembled into the
// models folder. Works on temporary models directories; models/build is never touched.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM without types
import { defaultModelsDir as buildDefaultModelsDir } from '../../models/build.mjs';
import { configureEngine, defaultModelsDir, getSession, listModels, modelPath, prepareModel, releaseSessions, verifyModels } from '../../src/engine/models.js';

let tmp: string;
let realDir: string;

beforeAll(async () => {
  await releaseSessions();
  realDir = path.dirname(modelPath('esrgan-slim-x2'));
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'imgtool-models-'));
  fs.copyFileSync(path.join(realDir, 'esrgan-slim-x2.onnx'), path.join(tmp, 'esrgan-slim-x2.onnx'));
  fs.copyFileSync(path.join(realDir, 'esrgan-slim-x4.onnx'), path.join(tmp, 'esrgan-slim-x4.onnx'));
  // Flip one byte in the middle of the weights: still parseable by onnxruntime, wrong model.
  const f = path.join(tmp, 'esrgan-slim-x4.onnx');
  const buf = fs.readFileSync(f);
  buf[buf.length >> 1] ^= 0xff;
  fs.writeFileSync(f, buf);
  configureEngine({ modelsDir: tmp, buildMissing: false });
});

afterAll(async () => {
  await releaseSessions();
  configureEngine({ modelsDir: realDir, buildMissing: true });
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('model registry', () => {
  it('loads an intact model', async () => {
    const s = await getSession('esrgan-slim-x2');
    expect(s.inputNames).toEqual(['input']);
    expect(await getSession('esrgan-slim-x2')).toBe(s);
  });

  it('a missing model gives model_missing with the model name and the rebuild command', async () => {
    const err = await getSession('esrgan-thick-x4').catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'model_missing', exitCode: 1 });
    expect((err as Error).message).toMatch(/model esrgan-thick-x4 is missing or corrupt \(.*esrgan-thick-x4\.onnx\).*rebuild it with: imgtool models build/);
  });

  it('a corrupt model gives model_missing, and not a cached session', async () => {
    for (let i = 0; i < 2; i++) {
      const err = await getSession('esrgan-slim-x4').catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'model_missing' });
      expect((err as Error).message).toMatch(/model esrgan-slim-x4 .*sha256.*rebuild it with: imgtool models build/);
    }
  });

  it('listModels and verifyModels report ok / corrupt / missing', () => {
    const status = Object.fromEntries(listModels().map((m) => [m.id, m.status]));
    expect(status).toMatchObject({ 'esrgan-slim-x2': 'ok', 'esrgan-slim-x4': 'corrupt', isnet: 'missing' });
    const v = verifyModels().find((m) => m.id === 'esrgan-slim-x4')!;
    expect(v.status).toBe('corrupt');
    expect(v.actualSha256).not.toBe(v.expectedSha256);
    for (const m of listModels()) {
      expect(m.licence).toMatch(/^model: .*(MIT|Apache|BSD).*; package (@?[\w./-]+)@[\d.]+: (MIT|Apache|AGPL)/);
      expect(['segment', 'upscale', 'person']).toContain(m.task);
    }
  });

  it('rejects an unknown model id as invalid_parameter', () => {
    expect(() => modelPath('nope')).toThrow(expect.objectContaining({ code: 'invalid_parameter' }));
  });
});

describe('models folder', () => {
  it('the engine and models/build.mjs agree on the default folder', () => {
    const home = os.homedir();
    const cases: NodeJS.ProcessEnv[] = [
      { IMGTOOL_MODELS_DIR: 'rel/models' },
      { IMGTOOL_MODELS_DIR: '/abs/models', XDG_CACHE_HOME: '/xdg' },
      { XDG_CACHE_HOME: '/xdg' },
      { XDG_CACHE_HOME: 'not-absolute' },
      {},
    ];
    for (const env of cases) expect(defaultModelsDir(env)).toBe(buildDefaultModelsDir(env));
    expect(defaultModelsDir({ IMGTOOL_MODELS_DIR: '/abs/models' })).toBe('/abs/models');
    // This checkout is a git clone: without IMGTOOL_MODELS_DIR it uses models/build (the
    // installed package, which has no .git, uses the per-user cache; the packaged-install
    // check in scripts/check-package.sh covers that).
    expect(defaultModelsDir({ XDG_CACHE_HOME: '/xdg' })).toBe(path.resolve(import.meta.dirname, '../../models/build'));
    expect(home).toBeTruthy();
  });

  it('the test suite reads the models from the repository (IMGTOOL_MODELS_DIR set by vitest.config.ts)', () => {
    expect(defaultModelsDir()).toBe(path.resolve(import.meta.dirname, '../../models/build'));
  });

  it('a missing model is assembled on first use, stamped, and loads', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'imgtool-first-use-'));
    try {
      configureEngine({ modelsDir: dir, buildMissing: true });
      const file = await prepareModel('esrgan-slim-x2');
      expect(file).toBe(path.join(dir, 'esrgan-slim-x2.onnx'));
      expect(fs.existsSync(`${file}.stamp`)).toBe(true);
      // nothing but the model, its stamp and its lock folder's absence: no temporary file left
      expect(fs.readdirSync(dir).sort()).toEqual(['esrgan-slim-x2.onnx', 'esrgan-slim-x2.onnx.stamp']);
      const v = verifyModels().find((m) => m.id === 'esrgan-slim-x2')!;
      expect(v.status).toBe('ok');
      expect((await getSession('esrgan-slim-x2')).inputNames).toEqual(['input']);
    } finally {
      await releaseSessions();
      configureEngine({ modelsDir: tmp, buildMissing: false });
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

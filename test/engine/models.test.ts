// Missing and corrupt models must fail with model_missing, naming the model and the fix.
// Works on a temporary models directory; models/build is never touched.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configureEngine, getSession, listModels, modelPath, releaseSessions, verifyModels } from '../../src/engine/models.js';

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
  configureEngine({ modelsDir: tmp });
});

afterAll(async () => {
  await releaseSessions();
  configureEngine({ modelsDir: realDir });
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
    expect((err as Error).message).toMatch(/model esrgan-thick-x4 is missing or corrupt \(.*esrgan-thick-x4\.onnx\).*rebuild it with: npm run models/);
  });

  it('a corrupt model gives model_missing, and not a cached session', async () => {
    for (let i = 0; i < 2; i++) {
      const err = await getSession('esrgan-slim-x4').catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'model_missing' });
      expect((err as Error).message).toMatch(/model esrgan-slim-x4 .*sha256.*rebuild it with: npm run models/);
    }
  });

  it('listModels and verifyModels report ok / corrupt / missing', () => {
    const status = Object.fromEntries(listModels().map((m) => [m.id, m.status]));
    expect(status).toMatchObject({ 'esrgan-slim-x2': 'ok', 'esrgan-slim-x4': 'corrupt', isnet: 'missing' });
    const v = verifyModels().find((m) => m.id === 'esrgan-slim-x4')!;
    expect(v.status).toBe('corrupt');
    expect(v.actualSha256).not.toBe(v.expectedSha256);
    for (const m of listModels()) {
      expect(m.licence).toMatch(/MIT|Apache|AGPL/);
      expect(['segment', 'upscale', 'person']).toContain(m.task);
    }
  });

  it('rejects an unknown model id as invalid_parameter', () => {
    expect(() => modelPath('nope')).toThrow(expect.objectContaining({ code: 'invalid_parameter' }));
  });
});

// The unit project's guard (test/unit-guard.ts) must really refuse what unit tests may not do.
import { expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import net from 'node:net';

it('refuses child processes, sockets and model loads', async () => {
  expect(() => spawn('true')).toThrow(/unit tests may not start a process/);
  expect(() => net.createConnection(80, '127.0.0.1')).toThrow(/may not open a socket/);
  expect(() => net.createServer().listen(0)).toThrow(/may not listen/);
  const ort = await import('onnxruntime-node');
  expect(() => ort.default.InferenceSession.create('model.onnx')).toThrow(/may not load a model/);
});

// Setup for the `unit` project: a unit test may not load a model, start ffmpeg or any other
// process, or open a socket. Each of those throws here, so a test that does one fails and
// names what it did: it belongs in the integration project (a *.test.ts file).
import child_process from 'node:child_process';
import net from 'node:net';
import { syncBuiltinESMExports } from 'node:module';
import { vi } from 'vitest';

function refuse(what: string): never {
  throw new Error(`unit tests may not ${what}: name the file *.test.ts (integration project)`);
}

for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const) {
  (child_process as unknown as Record<string, unknown>)[name] = () => refuse(`start a process (child_process.${name})`);
}
net.Socket.prototype.connect = function connect() {
  return refuse('open a socket');
};
net.Server.prototype.listen = function listen() {
  return refuse('listen on a socket');
};
// Make the patched functions visible to ESM named imports too.
syncBuiltinESMExports();

vi.mock('onnxruntime-node', () => {
  const InferenceSession = { create: () => refuse('load a model (onnxruntime InferenceSession.create)') };
  return { default: { InferenceSession }, InferenceSession };
});

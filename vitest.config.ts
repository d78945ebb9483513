import path from 'node:path';
import { defineConfig } from 'vitest/config';

// Two projects: `unit` (no models, no ffmpeg, no sockets or child processes: the guard in
// test/unit-guard.ts makes any of those fail the test) and `integration` (everything else:
// real models, real ffmpeg, real servers on loopback). `npm test` runs both;
// `npm run test:unit` runs the fast one alone.
const shared = {
  // onnxruntime-node and sharp are native addons: separate processes are the safe pool.
  pool: 'forks' as const,
  // Two cores: one test file at a time per core; each ONNX session already uses both.
  maxWorkers: 2,
  minWorkers: 1,
  testTimeout: 60_000,
  hookTimeout: 60_000,
  // The suite reads the models the clone's `prepare` built into models/build, never the
  // developer's per-user cache (a test that needs an empty folder sets its own).
  env: { IMGTOOL_MODELS_DIR: path.join(import.meta.dirname, 'models', 'build') },
};

export default defineConfig({
  test: {
    projects: [
      { test: { ...shared, name: 'unit', include: ['test/**/*.unit.test.ts'], setupFiles: ['test/unit-guard.ts'] } },
      { test: { ...shared, name: 'integration', include: ['test/**/*.test.ts'], exclude: ['test/**/*.unit.test.ts', '**/node_modules/**'] } },
    ],
  },
});

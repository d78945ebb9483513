import path from 'node:path';
import { defineConfig } from 'vitest/config';

// Two projects: `unit` (no models, no ffmpeg, no sockets or child processes: the guard in
// test/unit-guard.ts makes any of those fail the test) and `integration` (everything else:
// real models, real ffmpeg, real servers on loopback). `npm test` runs both;
// `npm run test:unit` runs the fast one alone.
const shared = {
  // onnxruntime-node and sharp are native addons: separate processes are the safe pool.
  pool: 'forks' as const,
  testTimeout: 60_000,
  hookTimeout: 60_000,
  // The suite reads the models the clone's `prepare` built into models/build, never the
  // developer's per-user cache (a test that needs an empty folder sets its own).
  env: { IMGTOOL_MODELS_DIR: path.join(import.meta.dirname, 'models', 'build') },
};

export default defineConfig({
  test: {
    // Two test files at a time. The pool reads this from the root config only (a project's
    // own maxWorkers is ignored); left unset, vitest run takes availableParallelism() - 1,
    // which is one file at a time on a 2-core machine. Two keeps one file's model work going
    // while the other starts its process, waits on a server or spawns ffmpeg.
    maxWorkers: 2,
    minWorkers: 1,
    projects: [
      { test: { ...shared, name: 'unit', include: ['test/**/*.unit.test.ts'], setupFiles: ['test/unit-guard.ts'] } },
      { test: { ...shared, name: 'integration', include: ['test/**/*.test.ts'], exclude: ['test/**/*.unit.test.ts', '**/node_modules/**'] } },
    ],
  },
});

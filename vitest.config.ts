import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // onnxruntime-node and sharp are native addons: separate processes are the safe pool.
    pool: 'forks',
    // Two cores: one test file at a time per core; each ONNX session already uses both.
    maxWorkers: 2,
    minWorkers: 1,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});

import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Real-filesystem tests share one slow disk: two workers keep the 2-core machine responsive.
    maxWorkers: 2,
  },
});

import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/setup/leaks.ts'],
  },
});

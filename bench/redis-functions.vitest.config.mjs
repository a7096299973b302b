// The test suite with every Redis script call made by FCALL on the prototype Functions library:
//
//   TEST_REDIS_URL=redis://127.0.0.1:6379 npx vitest run -c bench/redis-functions.vitest.config.mjs [files]
//
// (see bench/redis-functions-vitest-setup.mjs for the variants). Child processes that load dist/
// (the CLI, worker fixtures) still use EVALSHA.
import { defineConfig, mergeConfig } from 'vitest/config';
import base from '../vitest.config.ts';

export default mergeConfig(base, defineConfig({ test: { setupFiles: ['bench/redis-functions-vitest-setup.mjs'] } }));

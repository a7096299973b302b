// A vitest setup file (bench/redis-functions.vitest.config.mjs): the test suite's Redis backends
// run every script through the prototype Functions library (bench/redis-functions-lib.mjs) by
// FCALL instead of EVALSHA. FCALL_STATE=kept builds the naive library whose per-call values are
// made once at load (to show what that breaks); FCALL_GLOBALS=plain leaves the globals unbound.
import * as scripts from '../src/backend/redis/scripts.ts';
import * as luaSource from '../src/backend/redis/lua-source.ts';
import * as keys from '../src/backend/redis/keys.ts';
import { installFunctions } from './redis-functions-lib.mjs';

installFunctions({ scripts, luaSource, keys, keepState: process.env.FCALL_STATE === 'kept', cacheGlobals: process.env.FCALL_GLOBALS !== 'plain' });

// Preloaded with `node --import ./bench/redis-functions-fcall.mjs <script>`: every Taskline
// script call of that process goes through the prototype Redis Functions library
// (bench/redis-functions-lib.mjs) by FCALL instead of EVALSHA. With FCALL_REPORT=1 it prints how
// many calls took that path when the process exits (to stderr), as a check that it did.
// FCALL_GLOBALS=plain builds the library without binding the globals to locals (to price that).
import * as scripts from '../dist/backend/redis/scripts.js';
import * as luaSource from '../dist/backend/redis/lua-source.js';
import * as keys from '../dist/backend/redis/keys.js';
import { installFunctions } from './redis-functions-lib.mjs';

// FCALL_GLOBALS=plain: the library reads Lua's globals directly, as a naive port would.
const cacheGlobals = process.env.FCALL_GLOBALS !== 'plain';
const { library } = installFunctions({ scripts, luaSource, keys, cacheGlobals });
if (process.env.FCALL_REPORT === '1') {
  const proto = scripts.ScriptRunner.prototype;
  const run = proto.run;
  let calls = 0;
  proto.run = function counted(...args) {
    calls += 1;
    return run.apply(this, args);
  };
  process.on('exit', () => process.stderr.write(`${calls} script calls by FCALL (library ${library.name})\n`));
}

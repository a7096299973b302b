// A prototype of Taskline's Lua scripts as one Redis Functions library (Redis >= 7), built from
// the same sources the script loader reads (lua/lib/clock.lua, the helpers of lua/lib/, the
// script bodies), and a switch that makes ScriptRunner call it by FCALL instead of EVALSHA. For
// measuring only (bench/redis-functions.mjs, bench/redis-functions.vitest.config.mjs); the
// loader in src/ is unchanged.
//
// A script runs its whole text on every EVALSHA: the clock, the K_ bindings, a closure for
// every helper function it uses. A library's text runs once, at FUNCTION LOAD; per FCALL
// only the registered callback runs. So what was per-call state in a script becomes upvalues of
// the library, set at the start of every callback:
//   - KEYS and ARGV (a callback receives them as arguments; the globals do not exist),
//   - NOW and NOW_S (redis.call is not available while the library loads, and the clock must be
//     read per call anyway),
//   - the K_ locals (each script receives its own subset of the queue keys, in its own order),
//     and FIRST_EXTRA_KEY,
//   - every top-level value of the helpers whose initializer reads ARGV, KEYS, a K_ local or NOW
//     (CHANNEL, QUEUE, ZSET_OF), or that is assigned or mutated after its definition
//     (FINISHED_BATCH, HEARD, LAST_TOKEN/LAST_HEAD, LIFECYCLE, TRIM, KEEP): its initializer runs
//     again at the start of every call. Left alone they would leak from one call into the next
//     (a cached PUBSUB NUMSUB answer, another queue's keep bounds, a finished batch that a later
//     call appends to instead of publishing, the TRIM and LIFECYCLE tables of a call that failed
//     halfway).
// The other top-level values (FINISHED, QUEUED_HEAD, TRIM_LIMIT, OPERATIONS and its methods,
// RUNNING_SEED) and every function are made once, at load.
//
// And the globals: in a library Redis makes the globals an empty table whose metatable's
// __index is the real one, so every `string.find`, `redis.call` or `tonumber` pays a metamethod
// lookup that a script's direct global does not (left so, it ate half or more of what the
// closures saved).
// While the library loads, only the load-time `redis` (register_function) is reachable, not even
// `string`; so the globals the text uses become library locals bound at the first call.
import { createHash } from 'node:crypto';

/** Lua text without its comments (good enough for these sources: no '--' inside a string). */
const code = (text) => text.replace(/--[^\n]*/g, '');

/** Lua's and Redis's globals the scripts may use (looked up in the text; bound once in a library). */
const BUILTINS = [
  'redis', 'string', 'table', 'math', 'cjson', 'cmsgpack', 'bit', 'struct', 'tonumber', 'tostring', 'unpack', 'ipairs', 'pairs', 'next',
  'type', 'pcall', 'error', 'assert', 'select', 'setmetatable', 'getmetatable', 'rawget', 'rawset', 'rawequal',
];

/** The function name of a script in the library (Redis allows letters, digits and _ only). */
const functionName = (version, script) => `tl_${version}_${script.replace(/-/g, '_')}`;

/**
 * Builds the library from the loader's own sources: `scripts` is the loader module
 * (dist/backend/redis/scripts.js, or src/…/scripts.ts under vitest), `luaSource` its Lua
 * source module (lua-source), `keys` the module with QUEUE_KEY_NAMES. Returns { name, version, source,
 * functions: Map<script name, function name>, perCall, once }. `keepState` (to show the trap)
 * makes the mutable values once-only, as a naive port would; `cacheGlobals: false` leaves the
 * globals as globals.
 */
export function buildLibrary({ scripts, luaSource, keys, keepState = false, cacheGlobals = true }) {
  const clock = luaSource.readLua('lib/clock.lua');
  const helpers = luaSource.readHelpers();
  const bodies = new Map(scripts.SCRIPT_NAMES.map((name) => [name, luaSource.readLua(`${name}.lua`)]));
  // The queue scripts are those the loader gives the key binding (the others get the clock only).
  const queueScripts = new Set(scripts.SCRIPT_NAMES.filter((name) => scripts.scriptSource(name).includes('local FIRST_EXTRA_KEY = ')));
  const helperText = helpers.map((b) => b.text).join('\n');
  const version = createHash('sha1').update(clock).update(helperText).update([...bodies.values()].join('\n')).update(JSON.stringify({ keepState, cacheGlobals })).digest('hex').slice(0, 8);

  // The clock's top-level locals become library upvalues; its statements, the start of every
  // callback.
  const clockNames = [];
  const clockStatements = clock
    .split('\n')
    .map((line) => {
      const local = /^local ([\w, ]+?)(\s*=.*)?$/.exec(line);
      if (!local) return line;
      clockNames.push(...local[1].split(',').map((n) => n.trim()));
      return local[2] ? `${local[1]}${local[2]}` : '';
    })
    .join('\n');

  // The helpers' top-level values: per call or once (see the top of this file).
  const everything = code([helperText, ...bodies.values()].join('\n'));
  const perCall = [];
  const once = [];
  const libParts = [];
  const resets = [];
  for (const block of helpers) {
    // A block is its comment lines, then its definition: a local function, a method of a table or
    // a local value (lua-source.ts parseLua).
    const lines = block.text.split('\n');
    const first = lines.findIndex((line) => !line.startsWith('--'));
    const comments = lines.slice(0, first).map((line) => `${line}\n`).join('');
    const rest = lines.slice(first).join('\n');
    const definition = /^local ([\w, ]+?) =(.*)$/s.exec(rest);
    if (!definition || /^local function /.test(rest)) {
      libParts.push(block.text);
      continue;
    }
    const names = definition[1].split(',').map((n) => n.trim());
    const initializer = code(definition[2]);
    const elsewhere = everything.replace(code(block.text), '');
    const assigned = names.some((n) =>
      new RegExp(`\\b${n}\\b(?:\\s*(?:\\[[^\\]]*\\]|\\.\\w+))*\\s*(?:,\\s*[A-Za-z_][\\w.]*(?:\\[[^\\]]*\\])?\\s*)*=(?!=)`).test(elsewhere),
    );
    const dynamic = /\b(?:ARGV|KEYS|NOW|NOW_S|K_\w+)\b/.test(initializer);
    if (dynamic || (assigned && !keepState)) {
      perCall.push(...names);
      libParts.push(`${comments}local ${names.join(', ')} -- set per call (begin_queue)`);
      resets.push(`  ${names.join(', ')} =${code(definition[2]).replace(/\s+$/, '')}`);
    } else {
      once.push(...names);
      libParts.push(block.text);
    }
  }

  const keyNames = keys.QUEUE_KEY_NAMES.map((k) => luaSource.luaKeyName(k));
  const functions = new Map();
  const registrations = [];
  for (const [name, body] of bodies) {
    const fn = functionName(version, name);
    functions.set(name, fn);
    const start = ['  KEYS, ARGV = keys, args'];
    if (queueScripts.has(name)) {
      const received = scripts.scriptKeyNames(name);
      const slots = keys.QUEUE_KEY_NAMES.map((k) => (received.includes(k) ? `keys[${received.indexOf(k) + 1}]` : 'nil'));
      start.push(`  ${keyNames.join(', ')} =\n    ${slots.join(', ')}`);
      start.push(`  FIRST_EXTRA_KEY = ${received.length + 1}`);
      start.push('  begin_queue()');
    } else {
      start.push('  begin_clock()');
    }
    registrations.push(`-- ${name}.lua\nregister_function('${fn}', function(keys, args)\n${start.join('\n')}\n${body.replace(/\n+$/, '')}\nend)`);
  }

  // Globals the Lua text reads: in a library they are bound to locals at the first call (see the
  // top of this file); `redis` too, so registrations use the load-time API's register_function.
  const globals = cacheGlobals ? BUILTINS.filter((name) => new RegExp(`\\b${name}\\b`).test(code([clock, helperText, ...bodies.values()].join('\n')))) : [];
  const globalBinding = globals.length > 0
    ? [
        'local register_function = redis.register_function',
        '-- The runtime globals: not reachable while the library loads (only the load-time redis is).',
        `local function runtime_globals() return ${globals.join(', ')} end`,
        `local ${globals.join(', ')}`,
      ]
    : ['local register_function = redis.register_function'];
  const bindGlobals = globals.length > 0 ? `  if not ${globals[globals.length - 1]} then ${globals.join(', ')} = runtime_globals() end\n` : '';

  const source = [
    `#!lua name=taskline_${version}`,
    '-- Generated from lua/lib/clock.lua, the helpers of lua/lib/ and the script bodies (bench/redis-functions-lib.mjs).',
    ...globalBinding,
    '-- Per-call state: library upvalues, set at the start of every callback.',
    'local KEYS, ARGV',
    `local ${clockNames.join(', ')}`,
    `local ${keyNames.join(', ')}`,
    'local FIRST_EXTRA_KEY',
    '',
    libParts.join('\n'),
    '',
    '-- The clock, read at the start of every call (lib/clock.lua).',
    `local function begin_clock()\n${bindGlobals}${clockStatements.replace(/\n+$/, '')}\nend`,
    '',
    "-- The start of every queue script call: the clock, then the helpers' per-call values, in order.",
    `local function begin_queue()\n  begin_clock()\n${resets.join('\n')}\nend`,
    '',
    ...registrations,
    '',
  ].join('\n');
  return { name: `taskline_${version}`, version, source, functions, perCall, once };
}

/**
 * Makes ScriptRunner (the class of the given loader module) call the library by FCALL:
 * `ensureLoaded` loads it (FUNCTION LOAD REPLACE, after the scripts), and `run` reloads it and
 * calls again when Redis answers "Function not found" (a restart without persistence, a
 * FUNCTION FLUSH, a new cluster primary). `switchTo('evalsha')` puts the original back.
 */
export function installFunctions({ scripts, luaSource, keys, keepState = false, cacheGlobals = true }) {
  const library = buildLibrary({ scripts, luaSource, keys, keepState, cacheGlobals });
  const proto = scripts.ScriptRunner.prototype;
  const original = { run: proto.run, ensureLoaded: proto.ensureLoaded };
  const fcall = {
    run(target, name, keyList, args) {
      const fn = library.functions.get(name);
      return target.fcall(fn, keyList.length, ...keyList, ...args).catch(async (error) => {
        if (error instanceof Error && /Function not found/.test(error.message)) {
          await target.function('LOAD', 'REPLACE', library.source);
          return target.fcall(fn, keyList.length, ...keyList, ...args);
        }
        throw error;
      });
    },
    async ensureLoaded(redis) {
      await original.ensureLoaded.call(this, redis);
      await redis.function('LOAD', 'REPLACE', library.source);
    },
  };
  const switchTo = (via) => {
    const chosen = via === 'fcall' ? fcall : original;
    proto.run = chosen.run;
    proto.ensureLoaded = chosen.ensureLoaded;
  };
  switchTo('fcall');
  return { library, switchTo };
}

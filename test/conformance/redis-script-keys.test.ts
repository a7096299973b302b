import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { luaKeyName, SCRIPT_KEYS, type ScriptName } from '../../src/backend/redis/scripts.js';

// A hot script receives only the queue keys listed for it in SCRIPT_KEYS; a key it touches but
// does not receive would be nil in Lua (and undeclared for Redis Cluster). This reads the Lua
// sources and checks that every K_ local a script uses — itself or through the _lib.lua
// functions it calls, transitively — is in its list. (ZSET_OF[state] is dynamic: the conformance
// suite covers those paths.)
const dir = new URL('../../src/backend/redis/lua/', import.meta.url);
/** Lua source without its comments (a comment naming a function is not a call). */
const read = (file: string) => readFileSync(new URL(file, dir), 'utf8').replace(/--.*$/gm, '');
const lib = read('_lib.lua');

/** _lib.lua's functions: name → source text up to the next top-level function. */
function libFunctions(): Map<string, string> {
  const functions = new Map<string, string>();
  const starts = [...lib.matchAll(/^(?:local )?function ([A-Za-z_.]+)\(/gm)];
  starts.forEach((match, i) => {
    const end = i + 1 < starts.length ? starts[i + 1].index : lib.length;
    functions.set(match[1], lib.slice(match.index, end));
  });
  return functions;
}

function keysUsed(source: string, functions: Map<string, string>, seen = new Set<string>()): Set<string> {
  const used = new Set(source.match(/\bK_[A-Z_]+\b/g) ?? []);
  for (const [name, body] of functions) {
    if (seen.has(name)) continue;
    const called = name.startsWith('OPERATIONS.') ? source.includes('OPERATIONS[') || source.includes(name) : new RegExp(`\\b${name}\\(`).test(source);
    if (!called) continue;
    seen.add(name);
    for (const key of keysUsed(body, functions, seen)) used.add(key);
  }
  return used;
}

describe('Redis scripts receive every queue key they touch', () => {
  const functions = libFunctions();
  for (const [name, keys] of Object.entries(SCRIPT_KEYS) as [ScriptName, string[]][]) {
    it(name, () => {
      const source = read(`${name}.lua`);
      const declared = new Set(keys.map((k) => luaKeyName(k as never)));
      const missing = [...keysUsed(source, functions)].filter((k) => !declared.has(k));
      expect(missing).toEqual([]);
    });
  }
});

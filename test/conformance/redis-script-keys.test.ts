import { describe, expect, it } from 'vitest';
import { FINISHED_STATES, TASK_STATES } from '../../src/core/task.js';
import { ACCEPTED_STATES, REQUEST_STATES } from '../../src/core/transitions.js';
import {
  generatedHelpers, helpersFor, LIB_FILES, luaKeyName, namesUsed, parseLua, readHelpers, readLua, withoutComments,
} from '../../src/backend/redis/lua-source.js';
import { SCRIPT_KEYS, SCRIPT_NAMES, scriptKeyNames, scriptSource, type ScriptName } from '../../src/backend/redis/scripts.js';

// The checks read the Lua sources with the loader's own parser (lua-source.ts).
const helpers = readHelpers();

describe('Redis scripts receive every queue key they touch', () => {
  // A hot script receives only the queue keys listed for it in SCRIPT_KEYS; a key it touches but
  // does not receive would be nil in Lua (and undeclared for Redis Cluster). Every K_ local a
  // script uses — itself or through the helpers it calls, transitively — must be in its list.
  // (ZSET_OF[state] is dynamic: the conformance suite covers those paths.)
  for (const [name, keys] of Object.entries(SCRIPT_KEYS) as [ScriptName, string[]][]) {
    it(name, () => {
      const body = readLua(`${name}.lua`);
      const code = [body, ...helpersFor(helpers, body).filter((b) => !b.defines.includes('ZSET_OF')).map((b) => b.text)];
      const used = new Set(code.flatMap((text) => withoutComments(text).match(/\bK_[A-Z_]+\b/g) ?? []));
      const declared = new Set(keys.map((k) => luaKeyName(k as never)));
      expect([...used].filter((k) => !declared.has(k))).toEqual([]);
    });
  }
});

describe('the Lua helpers', () => {
  it('use only helpers defined before them (a Lua local is not visible before its definition)', () => {
    const defined = new Set(helpers.flatMap((b) => b.defines));
    const seen = new Set<string>();
    const early: string[] = [];
    for (const block of helpers) {
      for (const name of block.defines) seen.add(name);
      for (const name of namesUsed(block.text, defined)) if (!seen.has(name)) early.push(`${block.file}: ${block.defines[0]} uses ${name}`);
    }
    expect(early).toEqual([]);
  });

  it('are each defined once', () => {
    const names = helpers.flatMap((b) => (b.defines[0] === 'OPERATIONS' && !b.text.includes('local OPERATIONS') ? [] : b.defines));
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
  });

  it('are each used by some script', () => {
    const used = new Set(SCRIPT_NAMES.flatMap((name) => helpersFor(helpers, readLua(`${name}.lua`)).flatMap((b) => b.defines)));
    expect(helpers.flatMap((b) => b.defines).filter((n) => !used.has(n))).toEqual([]);
  });

  it('each file opens with a head saying what it holds', () => {
    for (const file of LIB_FILES) expect(parseLua(file, readLua(`lib/${file}.lua`)).head, file).toMatch(/^-- \S/);
  });
});

describe('the helpers generated from core/', () => {
  /** A generated Lua table of sets, read back: name → the keys set to true. */
  function readBack(name: string): Record<string, string[]> {
    const text = generatedHelpers().find((b) => b.defines.includes(name))!.text;
    const rows = [...text.matchAll(/^ {2}(\w+) = \{([^}]*)\},$/gm)];
    return Object.fromEntries(rows.map(([, action, set]) => [action, [...set.matchAll(/(\w+) = true/g)].map((m) => m[1])]));
  }

  it('say for each operator action the states core/transitions.ts says', () => {
    const sorted = (table: Readonly<Record<string, readonly string[]>>) =>
      Object.fromEntries(Object.entries(table).map(([action, states]) => [action, [...states].sort()]));
    expect(sorted(readBack('ACCEPTED'))).toEqual(sorted(ACCEPTED_STATES));
    expect(sorted(readBack('REQUESTED'))).toEqual(sorted(REQUEST_STATES));
  });

  it('list every task state, and the final ones', () => {
    const states = (name: string) => [...generatedHelpers().find((b) => b.defines.includes(name))!.text.matchAll(/(\w+) = true/g)].map((m) => m[1]).sort();
    expect(states('TASK_STATES')).toEqual([...TASK_STATES].sort());
    expect(states('FINISHED')).toEqual([...FINISHED_STATES].sort());
  });
});

describe('each script as Redis receives it', () => {
  it('strips the Cluster flag from the event channel before any use of it (lib/queue.lua)', () => {
    for (const name of SCRIPT_NAMES) {
      const code = withoutComments(scriptSource(name));
      const first = code.search(/\bCHANNEL\b/);
      if (first < 0) continue;
      expect(code.indexOf('if ON_CLUSTER then CHANNEL = string.sub(CHANNEL, 2) end'), name).toBeGreaterThan(first);
      expect(code.slice(0, code.indexOf('if ON_CLUSTER then CHANNEL')).match(/\bCHANNEL\b/g)?.length, name).toBe(1);
    }
  });

  it('starts with the clock, then the KEYS it receives, generated from its key list', () => {
    for (const name of SCRIPT_NAMES) expect(scriptSource(name).startsWith(readLua('lib/clock.lua')), name).toBe(true);
    for (const name of Object.keys(SCRIPT_KEYS) as ScriptName[]) {
      const source = scriptSource(name);
      const listed = scriptKeyNames(name).map((key, i) => `${i + 1} ${key}`).join(', ');
      expect(source, name).toContain(`-- KEYS ${listed};`);
      scriptKeyNames(name).forEach((key, i) => expect(source).toContain(`local ${luaKeyName(key)} = KEYS[${i + 1}]`));
    }
  });

  it('says in its header what each fixed ARGV it reads is', () => {
    // The ARGV a script reads at a fixed position, beyond the three every queue script takes,
    // are each named in the comment header of its file ("ARGV 4 limit, 5 …").
    for (const name of SCRIPT_NAMES) {
      const body = readLua(`${name}.lua`);
      // The ARGV lines of the header, each up to the next KEYS line or the code.
      const lines = body.split('\n');
      const header: string[] = [];
      let inArgv = false;
      for (const line of lines) {
        if (!line.startsWith('--')) break;
        const at = line.indexOf('ARGV');
        if (at >= 0) {
          inArgv = true;
          header.push(line.slice(at));
        } else if (line.startsWith('-- KEYS')) inArgv = false;
        else if (inArgv) header.push(line);
      }
      const read = [...withoutComments(body).matchAll(/ARGV\[(\d+)\]/g)].map((m) => Number(m[1]));
      const named = new Set([...header.join('\n').matchAll(/\b(\d+) [a-z]/g)].map((m) => Number(m[1])));
      const floor = (SCRIPT_NAMES.indexOf(name) < SCRIPT_NAMES.indexOf('schedule-save') ? 4 : 2);
      expect(read.filter((n) => n >= floor && !named.has(n)), name).toEqual([]);
    }
  });
});

/**
 * The Lua sources and how a script is assembled from them: the one parser of lua/lib/, used by
 * the loader (scripts.ts) and by the tests that check the scripts against their key lists.
 *
 * A queue script is sent to Redis as: the clock (lib/clock.lua), the binding of the queue keys
 * it receives (a generated `local K_META = KEYS[1]` per key), the helpers of lib/ it uses, and
 * its own file. Redis runs a script's whole body on every call, so each helper it carried but
 * did not use would cost a closure per call (the full prelude took ~15–30 µs per call on the
 * 2-core bench box): only the helpers a script names, and those they name, go in.
 */
import { readFileSync } from 'node:fs';
import { FINISHED_STATES, TASK_STATES } from '../../core/task.js';
import { ACCEPTED_STATES, OPERATOR_ACTIONS, REQUEST_STATES } from '../../core/transitions.js';
import { DEFAULT_RETENTION } from '../contract.js';
import { QUEUE_KEY_NAMES, type QueueKeyName } from './keys.js';

/**
 * The helper files in the order they are defined in a script: a helper may use only helpers of
 * an earlier file or earlier in its own file (a Lua local is not visible before its definition).
 */
export const LIB_FILES = [
  'queue', 'json', 'groups', 'records', 'events', 'record-text', 'keep', 'states', 'stats', 'backoff', 'node-ends', 'claim-batch', 'ack-batch', 'store-task',
  'operations', 'workflow',
] as const;

/** One top-level definition of a helper file: a local function, a local value or a method of a table. */
export interface LuaBlock {
  /** The names it defines (a method of a table defines the table's name). */
  defines: string[];
  /** Its text, with the comment lines right above it. */
  text: string;
  /** The helper file it is in. */
  file: string;
}

const BLOCK_START = /^(?:local function (\w+)|function (\w+)\.\w+|local ([\w, ]+?) =)/;

/**
 * Splits a helper file into its top-level definitions: each runs to the next one, and takes the
 * comment lines right above it (none blank). What comes before the first is the file's head.
 */
export function parseLua(file: string, source: string): { head: string; blocks: LuaBlock[] } {
  const head: string[] = [];
  const blocks: LuaBlock[] = [];
  let comment: string[] = [];
  const flush = () => {
    if (comment.length === 0) return;
    if (blocks.length > 0) blocks[blocks.length - 1].text += `\n${comment.join('\n')}`;
    else head.push(...comment);
    comment = [];
  };
  for (const line of source.split('\n')) {
    const start = BLOCK_START.exec(line);
    if (start) {
      const defines = (start[1] ?? start[2] ?? start[3]).split(',').map((n) => n.trim());
      blocks.push({ defines, text: [...comment, line].join('\n'), file });
      comment = [];
    } else if (line.startsWith('--')) comment.push(line);
    else {
      flush();
      if (blocks.length > 0) blocks[blocks.length - 1].text += `\n${line}`;
      else head.push(line);
    }
  }
  flush();
  return { head: head.join('\n'), blocks };
}

/** Lua source without its comments (a comment naming a function is not a use of it). */
export function withoutComments(source: string): string {
  return source.replace(/--[^\n]*/g, '');
}

/** The names of `defined` that a text uses. */
export function namesUsed(text: string, defined: ReadonlySet<string>): Set<string> {
  return new Set((withoutComments(text).match(/[A-Za-z_]\w*/g) ?? []).filter((w) => defined.has(w)));
}

/** The helpers a script body uses, and the ones those use, in definition order. */
export function helpersFor(blocks: readonly LuaBlock[], body: string): LuaBlock[] {
  const names = new Set(blocks.flatMap((b) => b.defines));
  const needed = new Set<string>();
  const pending = [...namesUsed(body, names)];
  while (pending.length > 0) {
    const name = pending.pop()!;
    if (needed.has(name)) continue;
    needed.add(name);
    for (const block of blocks) {
      if (block.defines.includes(name)) pending.push(...namesUsed(block.text, names));
    }
  }
  return blocks.filter((b) => b.defines.some((n) => needed.has(n)));
}

/** The Lua local of a queue key: meta → K_META, firefloor → K_FIRE_FLOOR. */
export function luaKeyName(name: QueueKeyName): string {
  return name === 'firefloor' ? 'K_FIRE_FLOOR' : `K_${name.toUpperCase()}`;
}

/**
 * The generated head of a queue script: its KEYS, then a binding of every K_ local of lib/ —
 * to its KEYS slot when the script receives that key, else nil.
 */
export function keyBinding(received: readonly QueueKeyName[]): string {
  const listed = received.map((key, i) => `${i + 1} ${key}`).join(', ');
  const lines = [`-- KEYS ${listed}; then from FIRST_EXTRA_KEY the script's own keys.`];
  for (const key of QUEUE_KEY_NAMES) {
    const index = received.indexOf(key);
    lines.push(`local ${luaKeyName(key)} = ${index >= 0 ? `KEYS[${index + 1}]` : 'nil'}`);
  }
  // Script-specific keys (unique keys, a schedule's fire history) follow the queue keys.
  lines.push(`local FIRST_EXTRA_KEY = ${received.length + 1}`);
  return lines.join('\n');
}

const LUA_DIR = new URL('./lua/', import.meta.url);

/** A file of lua/ (`claim.lua`, `lib/keep.lua`). */
export function readLua(path: string): string {
  return readFileSync(new URL(path, LUA_DIR), 'utf8');
}

/** Every helper of lib/, in definition order, after the generated ones. */
export function readHelpers(): LuaBlock[] {
  return [...generatedHelpers(), ...LIB_FILES.flatMap((file) => parseLua(file, readLua(`lib/${file}.lua`)).blocks)];
}

/**
 * Helpers generated from core/: the task states and the final ones, the states each operator action takes
 * (core/transitions.ts), as `local ACCEPTED = { run = { dead = true, … }, … }`, and those in
 * which it is a request; and from the contract the default retention of a cancelled task (one
 * a workflow cancels).
 */
export function generatedHelpers(): LuaBlock[] {
  const set = (list: readonly string[]) => (list.length === 0 ? '{}' : `{ ${list.map((state) => `${state} = true`).join(', ')} }`);
  const table = (name: string, states: Readonly<Record<string, readonly string[]>>) => {
    const rows = OPERATOR_ACTIONS.map((action) => `  ${action} = ${set(states[action])},`);
    return `local ${name} = {\n${rows.join('\n')}\n}`;
  };
  return [
    {
      defines: ['TASK_STATES'],
      text: `-- Every task state (generated from core/task.ts).\nlocal TASK_STATES = ${set(TASK_STATES)}`,
      file: 'core/task.ts',
    },
    {
      defines: ['FINISHED'],
      text: `-- The final states (generated from core/task.ts).\nlocal FINISHED = ${set(FINISHED_STATES)}`,
      file: 'core/task.ts',
    },
    {
      defines: ['ACCEPTED'],
      text: `-- The states each operator action takes (generated from core/transitions.ts).\n${table('ACCEPTED', ACCEPTED_STATES)}`,
      file: 'core/transitions.ts',
    },
    {
      defines: ['REQUESTED'],
      text: `-- The taken states in which an action is a request, not a transition.\n${table('REQUESTED', REQUEST_STATES)}`,
      file: 'core/transitions.ts',
    },
    {
      defines: ['DEFAULT_CANCELLED_RETENTION'],
      text: `-- ms a cancelled task is kept by default (generated from backend/contract.ts).\nlocal DEFAULT_CANCELLED_RETENTION = ${DEFAULT_RETENTION.cancelled}`,
      file: 'backend/contract.ts',
    },
  ];
}

/**
 * The source of a queue script as Redis receives it. `replacement`: a body to run instead of the
 * script's own, with the same prelude (a benchmark measures the prelude's cost so).
 */
export function assembleQueueScript(name: string, received: readonly QueueKeyName[], helpers: readonly LuaBlock[], replacement?: string): string {
  const body = readLua(`${name}.lua`);
  const used = helpersFor(helpers, body).map((b) => b.text);
  return [readLua('lib/clock.lua'), keyBinding(received), ...used, `-- ${name}.lua`, replacement ?? body].join('\n');
}

/** The source of a script on other keys (schedules, scheduler instances, locks): the clock, then the script. */
export function assemblePlainScript(name: string): string {
  return [readLua('lib/clock.lua'), `-- ${name}.lua`, readLua(`${name}.lua`)].join('\n');
}

import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { QUEUE_KEY_NAMES, type QueueKeyName } from './keys.js';

/** Scripts on the keys of one queue: they get the clock prelude and the queue prelude (_lib.lua). */
const QUEUE_SCRIPTS = [
  'enqueue', 'claim', 'ack', 'ack-claim', 'renew', 'recover', 'forward', 'cleanup', 'operate', 'operate-all', 'progress', 'queue-info',
  'fire', 'fire-history',
] as const;
/** Scripts on other keys (schedules, scheduler instances, locks): the clock prelude only. */
const PLAIN_SCRIPTS = ['schedule-save', 'schedule-advance', 'schedulers', 'lock'] as const;
export const SCRIPT_NAMES = [...QUEUE_SCRIPTS, ...PLAIN_SCRIPTS] as const;
export type ScriptName = (typeof SCRIPT_NAMES)[number];

/**
 * The queue keys a hot script receives, in this order as KEYS[1..n] (its extra keys follow):
 * exactly the keys it and the _lib.lua functions it calls touch, so each call declares every key
 * it uses and carries no others (a one-task enqueue sends 5 keys instead of 20). Scripts not
 * listed receive all of QUEUE_KEY_NAMES in that order. test/conformance/redis-script-keys.test.ts
 * checks the lists against the Lua sources.
 */
export const SCRIPT_KEYS: Partial<Record<ScriptName, readonly QueueKeyName[]>> = {
  enqueue: ['meta', 'payload', 'queued', 'scheduled', 'marker'],
  claim: ['meta', 'payload', 'queued', 'scheduled', 'retrying', 'running', 'paused', 'marker', 'seq'],
  ack: ['meta', 'payload', 'queued', 'retrying', 'running', 'completed', 'dead', 'cancelled', 'marker', 'stats', 'attempts', 'result', 'logs', 'cancel', 'keep'],
  'ack-claim': [
    'meta', 'payload', 'queued', 'scheduled', 'retrying', 'running', 'completed', 'dead', 'cancelled', 'paused', 'marker', 'stats', 'attempts',
    'result', 'logs', 'seq', 'cancel', 'keep',
  ],
  renew: ['meta', 'running', 'cancel'],
  forward: ['meta', 'queued', 'scheduled', 'retrying', 'marker'],
  recover: ['meta', 'payload', 'retrying', 'running', 'dead', 'cancelled', 'marker', 'stats', 'result', 'attempts', 'logs', 'cancel', 'keep'],
  progress: ['meta', 'logs'],
};

/** The queue keys a script receives, in KEYS order. */
export function scriptKeyNames(name: ScriptName): readonly QueueKeyName[] {
  return SCRIPT_KEYS[name] ?? QUEUE_KEY_NAMES;
}

/** The Lua local of a queue key: meta → K_META, firefloor → K_FIRE_FLOOR. */
export function luaKeyName(name: QueueKeyName): string {
  return name === 'firefloor' ? 'K_FIRE_FLOOR' : `K_${name.toUpperCase()}`;
}

/** Binds every K_ local of _lib.lua: to its KEYS slot when the script receives it, else nil. */
function keyBinding(name: ScriptName): string {
  const names = scriptKeyNames(name);
  const bindings = QUEUE_KEY_NAMES.map((key) => {
    const index = names.indexOf(key);
    return `local ${luaKeyName(key)} = ${index >= 0 ? `KEYS[${index + 1}]` : 'nil'}`;
  });
  // Script-specific keys (a schedule's fire history) follow the queue keys.
  bindings.push(`local FIRST_EXTRA_KEY = ${names.length + 1}`);
  return bindings.join('\n');
}

interface LoadedScript {
  source: string;
  sha: string;
}

/** One top-level definition of _lib.lua: a local function, a local value or a method of a table. */
interface LibBlock {
  /** The names it defines (a method of a table defines the table's name). */
  defines: string[];
  text: string;
}

const BLOCK_START = /^(?:local function (\w+)|function (\w+)\.\w+|local ([\w, ]+?) =)/;

/** Splits _lib.lua into its top-level definitions (each runs to the next one). */
export function parseLib(source: string): { head: string; blocks: LibBlock[] } {
  const head: string[] = [];
  const blocks: LibBlock[] = [];
  for (const line of source.split('\n')) {
    const start = BLOCK_START.exec(line);
    if (start) blocks.push({ defines: (start[1] ?? start[2] ?? start[3]).split(',').map((n) => n.trim()), text: line });
    else if (blocks.length > 0) blocks[blocks.length - 1].text += `\n${line}`;
    else head.push(line);
  }
  return { head: head.join('\n'), blocks };
}

/**
 * The part of _lib.lua a script uses: the definitions it names, and the ones those name, in
 * file order. Redis runs a script's whole body on every call, so each unused function would
 * cost a closure per call (the full prelude took ~15–30 µs per call on the 2-core bench box).
 */
export function libFor(lib: { head: string; blocks: LibBlock[] }, body: string): string {
  const names = new Set(lib.blocks.flatMap((b) => b.defines));
  const used = (text: string) => new Set((text.replace(/--[^\n]*/g, '').match(/[A-Za-z_]\w*/g) ?? []).filter((w) => names.has(w)));
  const needed = new Set<string>();
  const pending = [...used(body)];
  while (pending.length > 0) {
    const name = pending.pop()!;
    if (needed.has(name)) continue;
    needed.add(name);
    for (const block of lib.blocks) {
      if (block.defines.includes(name)) pending.push(...used(block.text));
    }
  }
  const kept = lib.blocks.filter((b) => b.defines.some((n) => needed.has(n)));
  return [lib.head, ...kept.map((b) => b.text)].join('\n');
}

function loadScripts(): Map<ScriptName, LoadedScript> {
  const dir = new URL('./lua/', import.meta.url);
  const clock = readFileSync(new URL('_time.lua', dir), 'utf8');
  const lib = parseLib(readFileSync(new URL('_lib.lua', dir), 'utf8'));
  const scripts = new Map<ScriptName, LoadedScript>();
  for (const name of SCRIPT_NAMES) {
    const body = readFileSync(new URL(`${name}.lua`, dir), 'utf8');
    const prelude = (QUEUE_SCRIPTS as readonly string[]).includes(name) ? `${clock}\n${keyBinding(name)}\n${libFor(lib, body)}` : clock;
    const source = `${prelude}\n-- ${name}.lua\n${body}`;
    scripts.set(name, { source, sha: createHash('sha1').update(source).digest('hex') });
  }
  return scripts;
}

const SCRIPTS = loadScripts();

export interface ScriptCall {
  name: ScriptName;
  keys: string[];
  args: (string | number)[];
}

/**
 * Runs scripts by EVALSHA, loading them on first use (and again after a Redis restart that
 * forgot them: NOSCRIPT falls back to EVAL, which caches the script again).
 */
export class ScriptRunner {
  run(target: Redis, name: ScriptName, keys: string[], args: (string | number)[]): Promise<unknown> {
    const script = SCRIPTS.get(name)!;
    return target.evalsha(script.sha, keys.length, ...keys, ...args).catch((error: unknown) => {
      if (error instanceof Error && error.message.startsWith('NOSCRIPT')) {
        return target.eval(script.source, keys.length, ...keys, ...args);
      }
      throw error;
    });
  }

  /**
   * Runs several script calls in one round trip: each is written at once and the replies come
   * back in order on the one connection (no Pipeline object: cheaper, and a call that failed
   * with NOSCRIPT — it did not run — is run again on its own by `run`).
   */
  runMany(redis: Redis, calls: ScriptCall[]): Promise<unknown[]> {
    return Promise.all(calls.map((call) => this.run(redis, call.name, call.keys, call.args)));
  }

  async ensureLoaded(redis: Redis): Promise<void> {
    const shas = [...SCRIPTS.values()].map((s) => s.sha);
    const exists = (await redis.script('EXISTS', ...shas)) as number[];
    const missing = [...SCRIPTS.values()].filter((_, i) => exists[i] !== 1);
    for (const script of missing) await redis.script('LOAD', script.source);
  }
}

import { createHash } from 'node:crypto';
import { Cluster, type Redis } from 'ioredis';
import { QUEUE_KEY_NAMES, type QueueKeyName } from './keys.js';
import { assemblePlainScript, assembleQueueScript, readHelpers } from './lua-source.js';

/**
 * Scripts on the keys of one queue: they get the clock, their key binding and the helpers of
 * lua/lib/ they use (lua-source.ts). The workflow scripts are assembled so too, for the helpers,
 * with no queue keys bound (SCRIPT_KEYS).
 */
const QUEUE_SCRIPTS = [
  'enqueue', 'claim', 'ack', 'ack-claim', 'renew', 'recover', 'forward', 'cleanup', 'operate', 'operate-all', 'progress', 'queue-info',
  'limits', 'fire', 'fire-history', 'workflow-create', 'workflow-cancel', 'workflow-retry', 'workflow-read', 'workflow-cleanup', 'workflow-inputs',
  'workflow-settle', 'workflow-apply',
] as const;
/** Scripts on other keys (schedules, scheduler instances, locks): the clock prelude only. */
const PLAIN_SCRIPTS = ['schedule-save', 'schedule-advance', 'schedulers', 'lock'] as const;
export const SCRIPT_NAMES = [...QUEUE_SCRIPTS, ...PLAIN_SCRIPTS] as const;
export type ScriptName = (typeof SCRIPT_NAMES)[number];

/**
 * The queue keys a hot script receives, in this order as KEYS[1..n] (its extra keys follow):
 * exactly the keys it and the lua/lib/ helpers it calls touch, so each call declares every key
 * it uses and carries no others (a one-task enqueue sends 5 keys instead of 20). Scripts not
 * listed receive all of QUEUE_KEY_NAMES in that order. test/conformance/redis-script-keys.test.ts
 * checks the lists against the Lua sources.
 */
export const SCRIPT_KEYS: Partial<Record<ScriptName, readonly QueueKeyName[]>> = {
  enqueue: ['meta', 'payload', 'queued', 'scheduled', 'retrying', 'marker', 'keep', 'stats'],
  claim: ['meta', 'payload', 'queued', 'scheduled', 'retrying', 'running', 'paused', 'marker', 'seq', 'keep', 'starts'],
  ack: ['meta', 'payload', 'queued', 'retrying', 'running', 'completed', 'dead', 'cancelled', 'marker', 'stats', 'attempts', 'result', 'logs', 'cancel', 'keep'],
  'ack-claim': [
    'meta', 'payload', 'queued', 'scheduled', 'retrying', 'running', 'completed', 'dead', 'cancelled', 'paused', 'marker', 'stats', 'attempts',
    'result', 'logs', 'seq', 'cancel', 'keep', 'starts',
  ],
  renew: ['meta', 'running', 'cancel'],
  forward: ['meta', 'queued', 'scheduled', 'retrying', 'marker'],
  recover: ['meta', 'payload', 'queued', 'retrying', 'running', 'dead', 'cancelled', 'marker', 'stats', 'result', 'attempts', 'logs', 'cancel', 'keep'],
  progress: ['meta', 'logs'],
  limits: ['queued', 'marker', 'keep'],
  // The workflow scripts take no queue's keys: they build the keys of the queues their nodes run
  // in, and the workflow's own, from the prefix (lua/lib/workflow.lua).
  'workflow-create': [],
  'workflow-cancel': [],
  'workflow-retry': [],
  'workflow-read': [],
  'workflow-cleanup': [],
  'workflow-inputs': [],
  'workflow-settle': [],
};

/** The queue keys a script receives, in KEYS order. */
export function scriptKeyNames(name: ScriptName): readonly QueueKeyName[] {
  return SCRIPT_KEYS[name] ?? QUEUE_KEY_NAMES;
}

interface LoadedScript {
  source: string;
  sha: string;
}

function loadScripts(): Map<ScriptName, LoadedScript> {
  const helpers = readHelpers();
  const scripts = new Map<ScriptName, LoadedScript>();
  for (const name of SCRIPT_NAMES) {
    const queue = (QUEUE_SCRIPTS as readonly string[]).includes(name);
    const source = queue ? assembleQueueScript(name, scriptKeyNames(name), helpers) : assemblePlainScript(name);
    scripts.set(name, { source, sha: createHash('sha1').update(source).digest('hex') });
  }
  return scripts;
}

/** The source Redis receives for a script (what the loader sends; for tests and benchmarks). */
export function scriptSource(name: ScriptName): string {
  return SCRIPTS.get(name)!.source;
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
  run(target: Redis | Cluster, name: ScriptName, keys: string[], args: (string | number)[]): Promise<unknown> {
    const script = SCRIPTS.get(name)!;
    return target.evalsha(script.sha, String(keys.length), ...keys, ...args).catch((error: unknown) => {
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
  runMany(redis: Redis | Cluster, calls: ScriptCall[]): Promise<unknown[]> {
    return Promise.all(calls.map((call) => this.run(redis, call.name, call.keys, call.args)));
  }

  /**
   * Runs calls and then WAIT for `replicas` replicas on one connection, in one pipeline (on a
   * Cluster the calls must share a slot: the pipeline, and the WAIT with it, go to its master).
   * Calls that found their script missing (NOSCRIPT: they did not run) run again by EVAL, with a
   * WAIT after them too. Returns the calls' replies and the fewest replicas a WAIT confirmed.
   */
  async runAndWait(target: Redis | Cluster, calls: ScriptCall[], replicas: number, timeoutMs: number): Promise<{ replies: unknown[]; confirmed: number }> {
    const send = async (byEval: boolean, list: ScriptCall[]) => {
      const pipeline = target.pipeline();
      for (const call of list) {
        const script = SCRIPTS.get(call.name)!;
        if (byEval) pipeline.eval(script.source, call.keys.length, ...call.keys, ...call.args);
        else pipeline.evalsha(script.sha, call.keys.length, ...call.keys, ...call.args);
      }
      pipeline.wait(replicas, timeoutMs);
      return (await pipeline.exec()) ?? [];
    };
    const answer = await send(false, calls);
    const replies: unknown[] = new Array(calls.length);
    const missing: number[] = [];
    calls.forEach((_, i) => {
      const [error, value] = answer[i] ?? [new Error('no reply'), null];
      if (error && error.message.startsWith('NOSCRIPT')) missing.push(i);
      else if (error) throw error;
      else replies[i] = value;
    });
    const [waitError, waited] = answer[calls.length] ?? [new Error('no reply to WAIT'), 0];
    if (waitError) throw waitError;
    let confirmed = Number(waited);
    if (missing.length > 0) {
      const again = await send(true, missing.map((i) => calls[i]));
      missing.forEach((at, j) => {
        const [error, value] = again[j] ?? [new Error('no reply'), null];
        if (error) throw error;
        replies[at] = value;
      });
      const [againError, againWaited] = again[missing.length] ?? [new Error('no reply to WAIT'), 0];
      if (againError) throw againError;
      confirmed = Math.min(confirmed, Number(againWaited));
    }
    return { replies, confirmed };
  }

  /** Loads the scripts a server lacks; on a Cluster, on each master (one promoted later loads them on NOSCRIPT). */
  async ensureLoaded(redis: Redis | Cluster): Promise<void> {
    if (redis instanceof Cluster) {
      // A master that does not answer now loads them on its first NOSCRIPT.
      await Promise.allSettled(redis.nodes('master').map((node) => this.ensureLoaded(node)));
      return;
    }
    const shas = [...SCRIPTS.values()].map((s) => s.sha);
    const exists = (await redis.script('EXISTS', ...shas)) as number[];
    const missing = [...SCRIPTS.values()].filter((_, i) => exists[i] !== 1);
    for (const script of missing) await redis.script('LOAD', script.source);
  }
}

// What a benchmark run prints about where it ran: the machine and the Taskline source.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import os from 'node:os';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);

/** The versions a run prints: Node, the Redis it measured, BullMQ, ioredis and Taskline's source. */
export function versions(redisVersion) {
  return {
    node: process.version,
    redis: redisVersion,
    bullmq: require('bullmq/package.json').version,
    ioredis: require('ioredis/package.json').version,
    taskline: `${require('../package.json').version} @ ${gitCommit()}`,
  };
}

export function machineInfo() {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model?.trim() ?? 'unknown',
    cores: cpus.length,
    memoryGiB: Number((os.totalmem() / 2 ** 30).toFixed(1)),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    loadAverage: os.loadavg().map((x) => Number(x.toFixed(2))),
  };
}

export function gitCommit() {
  // For runs on an exported tree (no .git): name the source yourself.
  if (process.env.BENCH_TASKLINE_REF) return process.env.BENCH_TASKLINE_REF;
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: HERE, stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', '../src'], { cwd: HERE, stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
    return dirty ? `${commit} (src modified)` : commit;
  } catch {
    return 'unknown';
  }
}

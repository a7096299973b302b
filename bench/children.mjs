// Child processes of a benchmark run, and their cleanup: every child is killed, and the private
// redis-server stopped, when the run ends, fails or is interrupted.
import { fork } from 'node:child_process';

const live = new Set();
let redisServer = null;

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The private redis-server to stop with the children (null: none). */
export function trackServer(server) {
  redisServer = server;
}

export function cleanupNow() {
  for (const child of live) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  live.clear();
  if (redisServer) {
    redisServer.killNow();
    redisServer = null;
  }
}

/** Kills children and Redis on exit and on SIGINT/SIGTERM/SIGHUP. */
export function installCleanup() {
  process.on('exit', cleanupNow);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => {
      console.error(`\n${signal}: stopping the benchmark, its children and its redis-server`);
      cleanupNow();
      process.exit(130);
    });
  }
}

/**
 * Forks `script` and talks to it over IPC. `next(type)` waits for a message of that type and
 * rejects on an `error` message, an exit before a `done` message, or the hard time limit.
 * `onMessage` may consume messages (return true) before they reach `next`.
 */
export function forkChild({ script, name, limitMs, init, execArgv = [], onMessage = () => false }) {
  const child = fork(script, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv });
  live.add(child);
  const inbox = [];
  let waiter = null;
  let failure = null;
  let finished = false;
  const fail = (error) => {
    if (failure) return;
    failure = error;
    if (waiter) waiter.reject(error);
    waiter = null;
  };
  const timer = setTimeout(() => {
    fail(new Error(`${name}: hard time limit of ${limitMs / 1000} s reached`));
    child.kill('SIGKILL');
  }, limitMs);
  child.on('message', (message) => {
    if (message.type === 'error') return fail(new Error(`${name}: ${message.message}`));
    if (onMessage(message)) return;
    if (message.type === 'done') finished = true;
    if (waiter && waiter.type === message.type) {
      waiter.resolve(message);
      waiter = null;
    } else inbox.push(message);
  });
  const exited = new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      live.delete(child);
      if (!finished) fail(new Error(`${name}: exited early (code ${code}, signal ${signal})`));
      resolve();
    });
  });
  child.on('error', (error) => fail(error));
  child.send(init);
  return {
    name,
    pid: child.pid,
    exited,
    next(type) {
      const index = inbox.findIndex((m) => m.type === type);
      if (index >= 0) return Promise.resolve(inbox.splice(index, 1)[0]);
      if (failure) return Promise.reject(failure);
      return new Promise((resolve, reject) => (waiter = { type, resolve, reject }));
    },
    send(message) {
      if (child.connected) child.send(message);
    },
    /** Waits up to `ms` for the child to exit by itself, then kills it. */
    async waitExit(ms) {
      await Promise.race([exited, sleep(ms)]);
      this.kill();
    },
    kill() {
      clearTimeout(timer);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

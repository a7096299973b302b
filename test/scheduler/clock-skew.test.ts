/**
 * Instances whose clocks are 30 s off ("now" is the store's clock): three
 * `taskline server` processes, one with its clock 30 s ahead and one 30 s behind (Debian's
 * `faketime`), each leading in turn as the leader is killed. No fire is early, none is twice.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ScheduleService } from '../../src/index.js';
import { BACKEND_KINDS } from '../cli/helpers.js';
import { expectEveryFire, storedFires, useServers, type ServerInstance } from './servers.js';

/** Debian's libfaketime (package faketime), preloaded straight into node: the `faketime` wrapper forks, so signals would miss node. */
const LIBFAKETIME = ['/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1', '/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1'].find((p) => existsSync(p));

function skewed(offset: string): Record<string, string> {
  return { LD_PRELOAD: LIBFAKETIME!, FAKETIME: offset };
}

function faketimeWorks(): boolean {
  if (LIBFAKETIME === undefined) return false;
  try {
    const out = execFileSync(process.execPath, ['-e', 'process.stdout.write(String(Date.now()))'], { encoding: 'utf8', timeout: 10_000, env: { ...process.env, ...skewed('+30s') } });
    return Math.abs(Number(out) - Date.now() - 30_000) < 5_000;
  } catch {
    return false;
  }
}

const present = faketimeWorks();
if (!present) console.warn('skipping the clock-skew tests: libfaketime is not installed or does not shift the clock (apt-get install faketime; .ci/run installs it)');

const SKEWS = ['+30s', '-30s'];
const TRUE_CLOCK = 'true clock';

describe.skipIf(!present).each(BACKEND_KINDS)('schedulers with skewed clocks on %s', (kind) => {
  const t = useServers(kind);

  it('one instance 30 s ahead, one 30 s behind, leading in turn: no early fire, no duplicate', async () => {
    const { backend, servers } = t;
    const service = new ScheduleService(backend);
    await service.create({ id: 'every-second', cron: '* * * * * *', task: { type: 'tick' }, overlap: 'allow' });
    // Each clock leads in turn: the current leader is killed (and replaced by one with its clock)
    // until an instance with the wanted clock holds the lease; it then leads for 3 s.
    const clockOf = new Map<ServerInstance, string>();
    const start = async (clock: string) => {
      const server = await servers.start(clock === TRUE_CLOCK ? {} : { env: skewed(clock) });
      clockOf.set(server, clock);
      return server;
    };
    for (const clock of [...SKEWS, TRUE_CLOCK]) await start(clock);
    const from = (await backend.now()) + 1_000;
    const led: string[] = [];
    for (const wanted of [SKEWS[0], SKEWS[1], TRUE_CLOCK]) {
      for (let kills = 0; kills < 8; kills++) {
        const { server } = await servers.leader();
        if (clockOf.get(server) === wanted) break;
        server.process.signal('SIGKILL');
        await server.process.exited;
        await start(clockOf.get(server)!);
      }
      const { server } = await servers.leader();
      led.push(clockOf.get(server)!);
      await new Promise((r) => setTimeout(r, 3_000));
    }
    await new Promise((r) => setTimeout(r, 4_000));
    const to = (await backend.now()) - 3_500;
    await servers.stopAll();
    // Who takes over is the store's race: a clock may miss its turn after 8 kills (CI saw the
    // -30 s one lose 8 times once); skewed and true clocks both have led.
    expect(led.some((clock) => SKEWS.includes(clock)), led.join(', ')).toBe(true);
    expect(new Set(led).size, led.join(', ')).toBeGreaterThanOrEqual(2);
    const fires = await storedFires(backend);
    expectEveryFire(fires.get('every-second') ?? [], 'every-second', 1_000, from, to, 3_000);
    for (const f of await service.fires('every-second', { limit: 100 })) {
      expect(f.outcome).toBe('enqueued');
      expect(f.lagMs).toBeGreaterThanOrEqual(0);
    }
  }, 90_000);
});

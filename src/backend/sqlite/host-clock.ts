/**
 * The store's clock on SQLite: the host kernel's clock, as the file system stamps a write. Every
 * process sharing the database file runs on that host, so they all agree on it — even a process
 * whose own reading of the time is shifted (a clock faked for it, as `faketime` does), which
 * would otherwise fire schedules early or take over leases before they expire.
 *
 * The offset between this process's clock and the kernel's is measured by writing a byte to a
 * private unlinked temporary file and reading its modification time: at start and then every few
 * seconds. The file system stamps with a coarse clock, up to a few ms behind the real time, so
 * the estimate errs late, never early; offsets within NOISE_MS count as none. The temporary
 * directory must be on a local file system (its clock is the host's).
 */
import { closeSync, fstatSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

/** Offsets this small are the coarse file clock, not a shifted process clock. */
const NOISE_MS = 25;
const PROBE = Buffer.from('t');

export class HostClock {
  private fd: number | null = null;
  /** The probe file's name while it could not be unlinked at once (removed at close). */
  private path: string | null = null;
  private offset = 0;
  private checkedAt = -Infinity;

  /** `everyMs`: how often the offset is measured again. */
  constructor(private readonly everyMs = 5_000) {
    try {
      const path = join(tmpdir(), `taskline-clock-${process.pid}-${randomBytes(4).toString('hex')}`);
      this.fd = openSync(path, 'wx+');
      try {
        unlinkSync(path);
      } catch {
        this.path = path; // some systems cannot unlink an open file: removed at close
      }
    } catch {
      this.fd = null; // no writable temporary directory: the process clock is used as it is
    }
    this.measure(Date.now());
  }

  now(): number {
    const local = Date.now();
    if (local - this.checkedAt >= this.everyMs || local < this.checkedAt) this.measure(local);
    return local + this.offset;
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
    if (this.path !== null) {
      try {
        unlinkSync(this.path);
      } catch {
        // already gone
      }
      this.path = null;
    }
  }

  private measure(local: number): void {
    this.checkedAt = local;
    if (this.fd === null) return;
    try {
      writeSync(this.fd, PROBE, 0, 1, 0);
      const stamped = fstatSync(this.fd).mtimeMs;
      const estimate = Math.floor(stamped - Date.now());
      // Small changes are the file clock's coarseness: keep the offset steady through them.
      if (Math.abs(estimate - this.offset) > NOISE_MS) this.offset = Math.abs(estimate) <= NOISE_MS ? 0 : estimate;
    } catch {
      // A failed measurement keeps the last offset.
    }
  }
}

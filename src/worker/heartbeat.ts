import { hostname } from 'node:os';
import type { Backend, WorkerInfo } from '../backend/contract.js';
import { PeriodicComponent } from './component.js';
import type { HandlerRegistry } from './handlers.js';
import type { Processor } from './processor.js';
import { describeTaskTypes } from './task-types.js';
import { VERSION } from '../version.js';

/** How often the handled types are recorded again (a Redis without persistence may lose them). */
const TYPES_EVERY_MS = 60_000;

/**
 * Records the worker in the store's registry every interval, with the types it handles; the
 * entry expires when beats stop. The types and their payload schemas are recorded at start and
 * every minute.
 */
export class Heartbeat extends PeriodicComponent {
  private typesRecordedAt = 0;
  /** Set once the worker stops claiming: it then announces no types, so no task is handed back to it. */
  private draining = false;

  constructor(
    private readonly backend: Backend,
    private readonly info: Omit<WorkerInfo, 'running' | 'host' | 'pid' | 'version' | 'types'>,
    private readonly registry: HandlerRegistry,
    private readonly processor: Processor,
    private readonly beatEveryMs: number,
    private readonly reportBeatError: (e: unknown, where: string) => void,
  ) {
    // The first beat is announce(), awaited by Worker.start.
    super('heartbeat', beatEveryMs, () => this.beat(), reportBeatError, false);
  }

  /** The first beat, before the worker claims anything; a store error is reported, not thrown. */
  async announce(): Promise<void> {
    try {
      await this.beat();
    } catch (error) {
      this.reportBeatError(error, this.name);
    }
  }

  /** The worker stopped claiming: beat now without types (a store error is reported, not thrown). */
  async drain(): Promise<void> {
    this.draining = true;
    await this.announce();
  }

  private async beat(): Promise<void> {
    const ttlMs = this.beatEveryMs * 3;
    const types = this.draining ? [] : this.registry.registrations().map((r) => r.pattern);
    // The entry first: a failed types write must not cost the worker its place in the registry.
    await this.backend.heartbeat({ ...this.info, host: hostname(), pid: process.pid, version: VERSION, running: this.processor.active.ids(), types }, ttlMs);
    if (!this.draining && Date.now() - this.typesRecordedAt >= TYPES_EVERY_MS) {
      await this.backend.recordTaskTypes(describeTaskTypes(this.registry, this.info.queues));
      this.typesRecordedAt = Date.now();
    }
  }

  override async stop(): Promise<void> {
    await super.stop();
    await this.backend.removeWorker(this.info.id);
  }
}

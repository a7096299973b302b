import { hostname } from 'node:os';
import type { Backend, WorkerInfo } from '../backend/contract.js';
import { PeriodicComponent } from './component.js';
import type { Processor } from './processor.js';
import { VERSION } from '../version.js';

/** Records the worker in the store's registry every interval; the entry expires when beats stop. */
export class Heartbeat extends PeriodicComponent {
  constructor(
    private readonly backend: Backend,
    private readonly info: Omit<WorkerInfo, 'running' | 'host' | 'pid' | 'version'>,
    processor: Processor,
    intervalMs: number,
    onError: (e: unknown, where: string) => void,
  ) {
    super(
      'heartbeat',
      intervalMs,
      () => backend.heartbeat({ ...info, host: hostname(), pid: process.pid, version: VERSION, running: processor.active.ids() }, intervalMs * 3),
      onError,
    );
  }

  override async stop(): Promise<void> {
    await super.stop();
    await this.backend.removeWorker(this.info.id);
  }
}

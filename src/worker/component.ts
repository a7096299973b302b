/**
 * The shape every background part of a worker shares (asynq's server is the model): `start()`
 * begins its work, `stop()` ends it and resolves once nothing of it is left running.
 */
export interface Component {
  readonly name: string;
  start(): void;
  stop(): Promise<void>;
}

/**
 * Runs `tick` every `intervalMs` (measured from the end of the previous tick, so ticks never
 * overlap). Errors go to `onError`; the next tick runs as usual.
 */
export class PeriodicComponent implements Component {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = true;

  constructor(
    readonly name: string,
    private readonly intervalMs: number,
    private readonly tick: () => Promise<void>,
    private readonly onError: (error: unknown, component: string) => void,
    private readonly runAtStart = true,
  ) {}

  start(): void {
    this.stopped = false;
    this.schedule(this.runAtStart ? 0 : this.intervalMs);
  }

  /** Runs a tick now (used when something tells the component there is work). */
  poke(): void {
    if (this.stopped || this.running) return;
    if (this.timer) clearTimeout(this.timer);
    this.schedule(0);
  }

  private schedule(delay: number): void {
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.tick()
        .catch((error: unknown) => this.onError(error, this.name))
        .finally(() => {
          this.running = null;
          if (!this.stopped) this.schedule(this.intervalMs);
        });
    }, delay);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }
}

/**
 * Removes one item from a small array. Hot paths keep what comes and goes in arrays, not Sets: a
 * Set with a live entry when V8 rebuilds its table keeps that entry alive through the retired
 * table, and retired tables in the old generation chain young objects into it (ActiveExecutions).
 */
export function removeFrom<T>(items: T[], item: T): void {
  const index = items.indexOf(item);
  if (index >= 0) items.splice(index, 1);
}

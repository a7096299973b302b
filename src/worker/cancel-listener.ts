import type { Backend, Unsubscribe } from '../backend/contract.js';
import type { Component } from './component.js';
import type { Processor } from './processor.js';

/** Aborts a running task's signal as soon as an operator cancels it (store notification). */
export class CancelListener implements Component {
  readonly name = 'cancel-listener';
  private unsubscribe: Promise<Unsubscribe> | null = null;

  constructor(private readonly backend: Backend, private readonly processor: Processor, private readonly onError: (e: unknown, where: string) => void) {}

  start(): void {
    this.unsubscribe = this.backend.subscribe((event) => {
      if (event.kind !== 'cancel-requested') return;
      for (const execution of this.processor.active.withId(event.id)) execution.abort('cancelled', 'cancelled by operator');
    }, { cancelsOnly: true });
    this.unsubscribe.catch((error: unknown) => this.onError(error, this.name));
  }

  /** Resolves once the subscription is in place (or failed, which start() reported). */
  async ready(): Promise<void> {
    await this.unsubscribe?.catch(() => undefined);
  }

  async stop(): Promise<void> {
    const pending = this.unsubscribe;
    this.unsubscribe = null;
    if (!pending) return;
    try {
      await (await pending)();
    } catch {
      // never subscribed: nothing to undo
    }
  }
}

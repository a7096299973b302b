/**
 * Graceful shutdown for long-running commands: the first SIGTERM/SIGINT starts a
 * graceful stop; a second one exits at once (exit 1 — the leases of running tasks expire and
 * other workers recover them).
 */

const SIGNALS: NodeJS.Signals[] = ['SIGTERM', 'SIGINT'];

export interface ShutdownSignal {
  /** Resolves with the first signal received. */
  readonly received: Promise<NodeJS.Signals>;
  /** Removes the handlers (once the process is about to exit). */
  dispose(): void;
}

export function listenForShutdown(onSecondSignal: (signal: NodeJS.Signals) => void = defaultSecondSignal): ShutdownSignal {
  let first: NodeJS.Signals | null = null;
  let resolveReceived!: (signal: NodeJS.Signals) => void;
  const received = new Promise<NodeJS.Signals>((resolve) => (resolveReceived = resolve));
  const handler = (signal: NodeJS.Signals) => {
    if (first === null) {
      first = signal;
      resolveReceived(signal);
    } else {
      onSecondSignal(signal);
    }
  };
  for (const signal of SIGNALS) process.on(signal, handler);
  return {
    received,
    dispose: () => {
      for (const signal of SIGNALS) process.off(signal, handler);
    },
  };
}

function defaultSecondSignal(signal: NodeJS.Signals): void {
  process.stderr.write(`taskline: second ${signal}: exiting now; running tasks will be recovered when their leases expire\n`);
  process.exit(1);
}

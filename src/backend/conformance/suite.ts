/**
 * The backend conformance suite: one set of tests every backend must pass unchanged, run against
 * a real store. Each area lives in its own file; this file composes them.
 *
 *   import { runConformanceSuite } from '../../src/backend/conformance/suite.js';
 *   runConformanceSuite('redis', () => redisStore());
 *
 * The factory opens a fresh, isolated store per test (a key prefix, a database file) and returns
 * its backend, `reopen({ clockOffsetMs })` to open another backend on the same store with a
 * shifted clock (time-based behaviour is tested with clock offsets, not sleeps), and `cleanup()`.
 */
import { describe } from 'vitest';
import { ackConformance } from './ack.js';
import { auditConformance } from './audit.js';
import { claimConformance } from './claim.js';
import { concurrencyConformance } from './concurrency.js';
import { enqueueConformance } from './enqueue.js';
import { eventsAndWorkersConformance } from './events-workers.js';
import { fireConformance } from './fires.js';
import { groupsConformance } from './groups.js';
import type { ConformanceStore, OpenStore } from './harness.js';
import { inspectionConformance } from './inspection.js';
import { keepConformance } from './keep.js';
import { limitsConformance } from './limits.js';
import { leaseConformance } from './leases.js';
import { lockConformance } from './locks.js';
import { operationConformance } from './operations.js';
import { schedulerConformance } from './schedulers.js';
import { scheduleConformance } from './schedules.js';
import { searchConformance } from './search.js';
import { workflowFailureConformance } from './workflow-failures.js';
import { workflowConformance } from './workflows.js';

export type { ConformanceStore, OpenStore };

export function runConformanceSuite(name: string, openStore: OpenStore): void {
  describe(`backend conformance: ${name}`, () => {
    enqueueConformance(openStore);
    claimConformance(openStore);
    ackConformance(openStore);
    leaseConformance(openStore);
    operationConformance(openStore);
    inspectionConformance(openStore);
    searchConformance(openStore);
    keepConformance(openStore);
    limitsConformance(openStore);
    groupsConformance(openStore);
    eventsAndWorkersConformance(openStore);
    concurrencyConformance(openStore);
    scheduleConformance(openStore);
    schedulerConformance(openStore);
    fireConformance(openStore);
    lockConformance(openStore);
    auditConformance(openStore);
    workflowConformance(openStore);
    workflowFailureConformance(openStore);
  });
}

/** What every route module gets. */
import type { Backend } from '../backend/contract.js';
import type { Client } from '../client/client.js';
import { TasklineError } from '../core/errors.js';
import type { ScheduleService } from '../scheduler/service.js';
import type { EventHub } from './events.js';

export interface ServerContext {
  backend: Backend;
  client: Client;
  hub: EventHub;
  /** Null when the store has no schedule operations. */
  schedules: ScheduleService | null;
}

export function scheduleService(ctx: ServerContext): ScheduleService {
  if (!ctx.schedules) throw new TasklineError('TL_NOT_SUPPORTED', `the ${ctx.backend.kind} store of this server does not support schedules yet`);
  return ctx.schedules;
}

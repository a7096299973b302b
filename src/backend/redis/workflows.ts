/** Workflows on Redis: not written yet (the conformance suite's workflow tests say what to build). */
import { TasklineError } from '../../core/errors.js';
import type { NewWorkflow, WorkflowInputs, WorkflowPage, WorkflowRecord, WorkflowState } from '../contract.js';
import type { RedisConnection } from './connection.js';

function notYet(): never {
  throw new TasklineError('TL_NOT_SUPPORTED', 'workflows are not available on the Redis backend yet');
}

export async function createWorkflow(_c: RedisConnection, _wf: NewWorkflow): Promise<WorkflowRecord> { notYet(); }
export async function getWorkflow(_c: RedisConnection, _id: string): Promise<WorkflowRecord | null> { notYet(); }
export async function listWorkflows(_c: RedisConnection, _o: { state?: WorkflowState; limit?: number; cursor?: string }): Promise<WorkflowPage> { notYet(); }
export async function cancelWorkflow(_c: RedisConnection, _id: string): Promise<WorkflowRecord | null> { notYet(); }
export async function retryWorkflow(_c: RedisConnection, _id: string, _f: string | null): Promise<WorkflowRecord | null> { notYet(); }
export async function workflowInputs(_c: RedisConnection, _n: Array<{ workflowId: string; node: string }>): Promise<Array<WorkflowInputs | null>> { notYet(); }
export async function cleanupWorkflows(_c: RedisConnection, _l: number): Promise<number> { notYet(); }

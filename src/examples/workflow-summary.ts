/**
 * workflow:summary, as a node of a workflow (its last, or a runOnFailure one): writes what each
 * parent node produced (its result, or how it failed) to `reports/<workflow id>-summary.json`,
 * so a pipeline leaves one file that says what it did. As a workflow's onFinish (no parents; its
 * payload is the WorkflowFinish outcome) it writes that outcome to
 * `reports/<workflow id>-finish.json` instead, so a workflow may use it both ways without the
 * one run overwriting the other's report.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WorkflowFinish } from '../backend/contract.js';
import { ParentFailure, type TaskContext } from '../worker/context.js';
import type { ExampleOptions } from './options.js';

export interface SummaryPayload extends Partial<WorkflowFinish> {
  /** Default `Workflow summary`. */
  title?: string;
}

export function workflowSummaryHandler(options: ExampleOptions) {
  return async (payload: SummaryPayload, ctx: TaskContext) => {
    const { workflowId: linked, workflowNode } = ctx.task.links;
    const workflowId = linked ?? ctx.task.id;
    const dir = join(options.dataDir, 'reports');
    mkdirSync(dir, { recursive: true });
    const base = join(dir, workflowId.replace(/[^A-Za-z0-9._-]/g, '_'));
    const title = payload.title ?? 'Workflow summary';
    // A task of a workflow that is none of its nodes is its onFinish run.
    if (linked !== undefined && workflowNode === undefined) {
      const finish = {
        title, workflowId, at: new Date().toISOString(),
        state: payload.state ?? null, completed: payload.completed ?? [], failed: payload.failed ?? [], cancelled: payload.cancelled ?? [],
      };
      const path = write(`${base}-finish.json`, finish);
      ctx.log(`recorded the end of workflow ${workflowId} (${finish.state}) in ${path}`);
      return { path, state: finish.state };
    }
    const parents = Object.entries(ctx.parents).map(([node, value]) =>
      value instanceof ParentFailure ? { node, state: value.state, error: value.error } : { node, state: 'completed', result: value },
    );
    const path = write(`${base}-summary.json`, { title, workflowId, at: new Date().toISOString(), parents });
    ctx.log(`summarised ${parents.length} parent nodes in ${path}`);
    return { path, parents: parents.map((p) => `${p.node}: ${p.state}`) };
  };
}

/** Writes a report whole (a reader never sees half of one); returns its path. */
function write(path: string, report: unknown): string {
  writeFileSync(`${path}.tmp`, `${JSON.stringify(report, null, 2)}\n`);
  renameSync(`${path}.tmp`, path);
  return path;
}

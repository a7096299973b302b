/**
 * workflow:summary: the last node of a workflow — writes what each parent node produced (its
 * result, or how it failed) to `reports/<workflow id>-summary.json`, so a pipeline leaves one
 * file that says what it did.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ParentFailure, type TaskContext } from '../worker/context.js';
import type { ExampleOptions } from './options.js';

export interface SummaryPayload {
  /** Default `Workflow summary`. */
  title?: string;
}

export function workflowSummaryHandler(options: ExampleOptions) {
  return async (payload: SummaryPayload, ctx: TaskContext) => {
    const parents = Object.entries(ctx.parents).map(([node, value]) =>
      value instanceof ParentFailure ? { node, state: value.state, error: value.error } : { node, state: 'completed', result: value },
    );
    const workflowId = ctx.task.links.workflowId ?? ctx.task.id;
    const summary = { title: payload.title ?? 'Workflow summary', workflowId, at: new Date().toISOString(), parents };
    const dir = join(options.dataDir, 'reports');
    mkdirSync(dir, { recursive: true });
    const path = join(dir, `${workflowId.replace(/[^A-Za-z0-9._-]/g, '_')}-summary.json`);
    writeFileSync(`${path}.tmp`, `${JSON.stringify(summary, null, 2)}\n`);
    renameSync(`${path}.tmp`, path);
    ctx.log(`summarised ${parents.length} parent nodes in ${path}`);
    return { path, parents: parents.map((p) => `${p.node}: ${p.state}`) };
  };
}

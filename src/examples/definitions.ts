/**
 * The example task types, declared once with their payload schemas and defaults so
 * producers and workers share them: `client.enqueue(reportGenerate, { title: 'Q3' })`.
 * Optional fields have no zod `.default()`: the payload type is then the same on both sides, and
 * each handler states its defaults.
 */
import { z } from 'zod';
import { defineTask } from '../core/define-task.js';

const recipients = z.union([z.string().email(), z.array(z.string().email()).min(1).max(50)]);

export const sendReport = defineTask('send_report', {
  schema: z.object({ to: recipients, title: z.string().min(1).max(200).optional(), days: z.number().int().min(1).max(366).optional() }),
});

export const cleanExpiredSessions = defineTask('clean_expired_sessions', {
  schema: z.object({ olderThanDays: z.number().int().min(0).max(3650).optional(), batchSize: z.number().int().min(1).max(100_000).optional() }),
});

export const syncExternalData = defineTask('sync_external_data', {
  schema: z.object({
    /** Default: the built-in sample records (sample-records.ts), no network. */
    url: z.string().url().refine((u) => /^https?:/.test(u), 'must be an http(s) URL').optional(),
    source: z.string().min(1).max(100).optional(),
    timeoutMs: z.number().int().min(100).max(120_000).optional(),
  }),
  defaults: { queue: 'sync_workers' },
});

export const emailDeliver = defineTask('email:deliver', {
  schema: z.object({ to: recipients, subject: z.string().max(998), text: z.string().max(1_000_000), from: z.string().email().optional() }),
});

export const reportGenerate = defineTask('report:generate', {
  schema: z.object({ title: z.string().min(1).max(200).optional(), source: z.string().min(1).max(100).optional() }),
  defaults: { queue: 'critical', timeout: 60_000 },
});

export const imageResize = defineTask('image:resize', {
  schema: z.object({
    /** A binary PPM (P6) file inside the examples' data directory; default: a generated test card. */
    input: z.string().min(1).max(500).optional(),
    width: z.number().int().min(1).max(4096),
    height: z.number().int().min(1).max(4096),
  }),
});

/**
 * The last node of the example workflow: sums up what its parents produced (ctx.parents). As a
 * workflow's onFinish it is given the outcome (WorkflowFinish), which it records instead.
 */
export const workflowSummary = defineTask('workflow:summary', {
  schema: z.object({
    title: z.string().min(1).max(200).optional(),
    // The WorkflowFinish an onFinish run gets; a node leaves them out.
    workflowId: z.string().optional(),
    state: z.enum(['completed', 'failed', 'cancelled']).optional(),
    completed: z.array(z.string()).optional(),
    failed: z.array(z.string()).optional(),
    cancelled: z.array(z.string()).optional(),
  }),
});

export const EXAMPLE_TASKS = [sendReport, cleanExpiredSessions, syncExternalData, emailDeliver, reportGenerate, imageResize, workflowSummary];

/**
 * The example handlers, registered on a worker. `taskline dev` uses them; so can
 * `taskline worker --handlers dist/examples/handlers.js` (the default export reads its settings
 * from the environment: TASKLINE_EXAMPLES_DIR, SMTP_URL, MAIL_FROM, APP_DATABASE).
 */
import type { Worker } from '../worker/worker.js';
import { cleanExpiredSessionsHandler } from './clean-expired-sessions.js';
import { cleanExpiredSessions, emailDeliver, imageResize, reportGenerate, sendReport, syncExternalData, workflowSummary } from './definitions.js';
import { emailDeliverHandler } from './email-deliver.js';
import { imageResizeHandler } from './image-resize.js';
import { exampleOptionsFromEnv, type ExampleOptions } from './options.js';
import { reportGenerateHandler } from './report-generate.js';
import { sendReportHandler } from './send-report.js';
import { syncExternalDataHandler } from './sync-external-data.js';
import { workflowSummaryHandler } from './workflow-summary.js';

/** The queues the examples use, with the weights `taskline dev` serves them by. */
export const EXAMPLE_QUEUES = 'critical=6,default=3,sync_workers=2,low=1';

export function registerExamples(worker: Worker, options: ExampleOptions): string[] {
  worker.handle(sendReport, sendReportHandler(options));
  worker.handle(cleanExpiredSessions, cleanExpiredSessionsHandler(options));
  worker.handle(syncExternalData, syncExternalDataHandler(options));
  worker.handle(emailDeliver, emailDeliverHandler(options));
  worker.handle(reportGenerate, reportGenerateHandler(options));
  worker.handle(imageResize, imageResizeHandler(options));
  worker.handle(workflowSummary, workflowSummaryHandler(options));
  return [sendReport, cleanExpiredSessions, syncExternalData, emailDeliver, reportGenerate, imageResize, workflowSummary].map((d) => d.type);
}

export default function registerExamplesFromEnv(worker: Worker): void {
  registerExamples(worker, exampleOptionsFromEnv());
}

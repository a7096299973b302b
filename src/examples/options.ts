/** Where the examples keep their files, and how they send mail. */
import { resolve, join } from 'node:path';

export interface ExampleOptions {
  /** Directory of the example data: app.db, outbox/, reports/, images/. Default `./.taskline` (TASKLINE_EXAMPLES_DIR). */
  dataDir: string;
  /** SMTP relay for mail, `smtp://[user:pass@]host[:port]` or `smtps://…`. Default: none, mail goes to `<dataDir>/outbox` (SMTP_URL). */
  smtpUrl?: string;
  /** Sender address. Default `taskline@localhost` (MAIL_FROM). */
  mailFrom: string;
  /** The example application's database. Default `<dataDir>/app.db` (APP_DATABASE). */
  appDatabase: string;
}

export function exampleOptionsFromEnv(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): ExampleOptions {
  const dataDir = resolve(cwd, env.TASKLINE_EXAMPLES_DIR?.trim() || '.taskline');
  return {
    dataDir,
    smtpUrl: env.SMTP_URL?.trim() || undefined,
    mailFrom: env.MAIL_FROM?.trim() || 'taskline@localhost',
    appDatabase: resolve(cwd, env.APP_DATABASE?.trim() || join(dataDir, 'app.db')),
  };
}

export const outboxDir = (options: ExampleOptions) => join(options.dataDir, 'outbox');

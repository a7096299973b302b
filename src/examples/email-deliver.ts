/** email:deliver: one message, by SMTP or into the outbox. SMTP 5xx → PermanentError, 4xx → retry. */
import { PermanentError } from '../core/errors.js';
import type { TaskContext } from '../worker/context.js';
import { sendMail, type MailMessage } from './mailer.js';
import { outboxDir, type ExampleOptions } from './options.js';
import { SmtpError } from './smtp-client.js';

export interface EmailPayload {
  to: string | string[];
  subject: string;
  text: string;
  from?: string;
}

export function emailDeliverHandler(options: ExampleOptions) {
  return async (payload: EmailPayload, ctx: TaskContext) => {
    const message: MailMessage = {
      from: payload.from ?? options.mailFrom,
      to: Array.isArray(payload.to) ? payload.to : [payload.to],
      subject: payload.subject,
      text: payload.text,
    };
    const sent = await deliver(message, ctx, options);
    return { to: message.to, ...sent };
  };
}

/** Sends, and turns a permanent SMTP refusal into a PermanentError (no point retrying a 550). */
export async function deliver(message: MailMessage, ctx: TaskContext, options: ExampleOptions) {
  try {
    const sent = await sendMail(message, ctx.task.id, { smtpUrl: options.smtpUrl, outboxDir: outboxDir(options) }, ctx.signal);
    ctx.log(`mail to ${message.to.join(', ')} ${sent.via === 'smtp' ? 'accepted by SMTP' : `written to ${sent.detail}`}`);
    return sent;
  } catch (error) {
    if (error instanceof SmtpError && error.permanent) throw new PermanentError(error.message, { cause: error });
    throw error;
  }
}

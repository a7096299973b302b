/**
 * Sends mail for the examples: by SMTP when an SMTP URL is configured, else into a local outbox
 * directory as `.eml` files (dev). The file name is the task id, so a retried attempt overwrites
 * its own file instead of sending twice.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { sendSmtp } from './smtp-client.js';

export interface MailMessage {
  from: string;
  to: string[];
  subject: string;
  text: string;
}

export interface MailerOptions {
  /** `smtp://…` / `smtps://…`; without it mail goes to the outbox. */
  smtpUrl?: string;
  outboxDir: string;
}

export interface SentMail {
  via: 'smtp' | 'outbox';
  messageId: string;
  /** The outbox file, or the SMTP server's final answer. */
  detail: string;
}

export async function sendMail(message: MailMessage, key: string, options: MailerOptions, signal?: AbortSignal): Promise<SentMail> {
  const domain = message.from.split('@')[1] ?? 'localhost';
  const messageId = `<${key.replace(/[^A-Za-z0-9._-]/g, '_')}.${randomUUID().slice(0, 8)}@${domain}>`;
  const rendered = renderMessage(message, messageId, new Date());
  if (options.smtpUrl) {
    const answer = await sendSmtp(options.smtpUrl, { from: message.from, to: message.to, message: rendered }, { signal });
    return { via: 'smtp', messageId, detail: answer };
  }
  mkdirSync(options.outboxDir, { recursive: true });
  const path = join(options.outboxDir, `${key.replace(/[^A-Za-z0-9._-]/g, '_')}.eml`);
  const temporary = `${path}.tmp`;
  writeFileSync(temporary, rendered);
  renameSync(temporary, path);
  return { via: 'outbox', messageId, detail: path };
}

/** An RFC 5322 message: UTF-8 text, base64 body, encoded-word subject when not ASCII. */
export function renderMessage(message: MailMessage, messageId: string, date: Date): string {
  const body = Buffer.from(message.text.replace(/\r?\n/g, '\r\n'), 'utf8').toString('base64').replace(/.{76}/g, '$&\r\n');
  const headers = [
    `From: ${message.from}`,
    `To: ${message.to.join(', ')}`,
    `Subject: ${encodeHeader(message.subject)}`,
    `Date: ${date.toUTCString()}`,
    `Message-ID: ${messageId}`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: base64',
  ];
  return `${headers.join('\r\n')}\r\n\r\n${body}\r\n`;
}

function encodeHeader(text: string): string {
  const flat = text.replace(/[\r\n]+/g, ' ');
  return /^[\x20-\x7e]*$/.test(flat) ? flat : `=?UTF-8?B?${Buffer.from(flat, 'utf8').toString('base64')}?=`;
}

/**
 * A minimal SMTP client over node:net / node:tls (RFC 5321): EHLO (HELO fallback), optional
 * AUTH PLAIN, MAIL FROM, RCPT TO, DATA with dot-stuffing, QUIT. Enough to hand a message to a
 * relay (`smtp://host:25`, `smtp://user:pass@host:587`, `smtps://host:465`); no STARTTLS.
 */
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { hostname } from 'node:os';

export class SmtpError extends Error {
  override name = 'SmtpError';
  /** The reply code, or 0 when the connection failed. 4xx are transient, 5xx permanent. */
  readonly code: number;
  constructor(message: string, code: number) {
    super(message);
    this.code = code;
  }
  get permanent(): boolean {
    return this.code >= 500;
  }
}

export interface SmtpEnvelope {
  from: string;
  to: string[];
  /** The whole RFC 5322 message (headers and body). */
  message: string;
}

interface Reply {
  code: number;
  lines: string[];
}

/** Sends one message; resolves with the server's answer to the end of DATA (e.g. `250 2.0.0 queued as …`). */
export async function sendSmtp(url: string, envelope: SmtpEnvelope, options: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<string> {
  const target = new URL(url);
  const secure = target.protocol === 'smtps:';
  if (target.protocol !== 'smtp:' && !secure) throw new SmtpError(`SMTP_URL must be smtp://[user:pass@]host[:port] or smtps://…, got ${target.protocol}`, 554);
  const port = Number(target.port || (secure ? 465 : 25));
  const socket = secure ? tlsConnect({ host: target.hostname, port, servername: target.hostname }) : netConnect({ host: target.hostname, port });
  const session = new SmtpSession(socket, options.timeoutMs ?? 30_000);
  const onAbort = () => session.fail(new SmtpError('sending was aborted', 0));
  options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await session.expect(220);
    const ehlo = await session.command(`EHLO ${hostname() || 'localhost'}`);
    if (ehlo.code !== 250) await session.command(`HELO ${hostname() || 'localhost'}`, 250);
    if (target.username !== '') {
      const credentials = Buffer.from(`\0${decodeURIComponent(target.username)}\0${decodeURIComponent(target.password)}`).toString('base64');
      await session.command(`AUTH PLAIN ${credentials}`, 235);
    }
    await session.command(`MAIL FROM:<${envelope.from}>`, 250);
    for (const recipient of envelope.to) await session.command(`RCPT TO:<${recipient}>`, 250, 251);
    await session.command('DATA', 354);
    const accepted = await session.command(`${dotStuff(envelope.message)}\r\n.`, 250);
    await session.command('QUIT').catch(() => undefined);
    return `${accepted.code} ${accepted.lines.join(' ')}`;
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    session.close();
  }
}

/** CRLF line ends, and a leading dot doubled (RFC 5321 §4.5.2). */
export function dotStuff(message: string): string {
  return message
    .replace(/\r?\n/g, '\r\n')
    .split('\r\n')
    .map((line) => (line.startsWith('.') ? `.${line}` : line))
    .join('\r\n');
}

class SmtpSession {
  private buffer = '';
  private readonly replies: Reply[] = [];
  private waiter: { resolve: (reply: Reply) => void; reject: (error: Error) => void } | null = null;
  private error: Error | null = null;
  private readonly partial: string[] = [];

  constructor(private readonly socket: Socket, timeoutMs: number) {
    socket.setEncoding('utf8');
    socket.setTimeout(timeoutMs, () => this.fail(new SmtpError(`no answer from the SMTP server within ${timeoutMs} ms`, 0)));
    socket.on('data', (chunk: string) => this.onData(chunk));
    socket.on('error', (error) => this.fail(new SmtpError(`SMTP connection failed: ${error.message}`, 0)));
    socket.on('close', () => this.fail(new SmtpError('the SMTP server closed the connection', 0)));
  }

  private onData(chunk: string): void {
    this.buffer += chunk;
    let index: number;
    while ((index = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, index).replace(/\r$/, '');
      this.buffer = this.buffer.slice(index + 1);
      const match = /^(\d{3})([ -])(.*)$/.exec(line);
      if (!match) {
        this.fail(new SmtpError(`unexpected SMTP reply line ${JSON.stringify(line.slice(0, 80))}`, 0));
        return;
      }
      this.partial.push(match[3]);
      if (match[2] === ' ') {
        this.deliver({ code: Number(match[1]), lines: this.partial.splice(0) });
      }
    }
  }

  private deliver(reply: Reply): void {
    if (this.waiter) {
      const { resolve } = this.waiter;
      this.waiter = null;
      resolve(reply);
    } else this.replies.push(reply);
  }

  fail(error: Error): void {
    this.error ??= error;
    if (this.waiter) {
      const { reject } = this.waiter;
      this.waiter = null;
      reject(this.error);
    }
  }

  private read(): Promise<Reply> {
    const queued = this.replies.shift();
    if (queued) return Promise.resolve(queued);
    if (this.error) return Promise.reject(this.error);
    return new Promise((resolve, reject) => (this.waiter = { resolve, reject }));
  }

  async expect(...codes: number[]): Promise<Reply> {
    return this.check('greeting', await this.read(), codes);
  }

  async command(line: string, ...codes: number[]): Promise<Reply> {
    if (this.error) throw this.error;
    this.socket.write(`${line}\r\n`);
    // Name the command, never its arguments (AUTH carries credentials, DATA the message).
    const verb = line.includes('\r\n') ? 'end of DATA' : line.split(' ')[0];
    return this.check(verb, await this.read(), codes);
  }

  private check(step: string, reply: Reply, codes: number[]): Reply {
    if (codes.length > 0 && !codes.includes(reply.code)) {
      throw new SmtpError(`SMTP ${step} refused: ${reply.code} ${reply.lines.join(' ')}`, reply.code);
    }
    return reply;
  }

  close(): void {
    this.socket.removeAllListeners('close');
    this.socket.destroy();
  }
}

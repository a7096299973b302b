/**
 * What every command gets: the resolved settings, the output, and the store — opened on
 * first use and closed when the command ends.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { connect } from '../backend/connect.js';
import type { Backend } from '../backend/contract.js';
import { loadSettings, type Settings } from '../config/index.js';
import { TasklineError } from '../core/errors.js';
import { createOutput, type Output } from './output.js';

export interface GlobalOptions {
  backend?: string;
  prefix?: string;
  config?: string;
  json?: boolean;
}

export interface OpenOptions {
  /**
   * Create the SQLite file when it does not exist. Only `dev` and `server`, which run a store's
   * services, do; every other command (worker, enqueue, schedule add, inspection) leaves it false,
   * so a mistyped path is an error rather than a new empty store. Default false.
   */
  create?: boolean;
}

export class CliContext {
  private opened: Backend | null = null;

  private constructor(readonly settings: Settings, readonly out: Output) {}

  static async fromCommand(command: Command): Promise<CliContext> {
    const options = command.optsWithGlobals<GlobalOptions>();
    const settings = await loadSettings({ flags: { backend: options.backend, prefix: options.prefix, config: options.config } });
    return new CliContext(settings, createOutput(options.json === true));
  }

  /** The store, opened once. */
  async backend(options: OpenOptions = {}): Promise<Backend> {
    if (this.opened) return this.opened;
    const { backend: url, prefix } = this.settings;
    if (url.startsWith('sqlite:') && options.create !== true) {
      const path = resolve(url.slice('sqlite:'.length));
      if (!existsSync(path)) {
        throw new TasklineError(
          'TL_STORE_UNAVAILABLE',
          `no store at ${url}: ${path} does not exist; \`taskline dev\` or \`taskline server\` with this backend creates it (or point --backend / TASKLINE_BACKEND at your store)`,
        );
      }
    }
    this.opened = await connect(url, { prefix });
    return this.opened;
  }

  /** The backend URL without a password, for messages. */
  get backendLabel(): string {
    return redact(this.settings.backend);
  }

  async close(): Promise<void> {
    const backend = this.opened;
    this.opened = null;
    if (backend) await backend.close();
  }
}

export function redact(url: string): string {
  return url.replace(/^(rediss?:\/\/[^:/@]*:)[^@]*@/, '$1***@');
}

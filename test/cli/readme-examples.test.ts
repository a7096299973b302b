/**
 * The README's example payloads cannot rot: every `taskline enqueue`, `curl … /api/v1/tasks`,
 * `client.enqueue('…', {…})`, `schedule add --type --payload` and config-file schedule of an
 * example task type is checked against the type's schema, and the runnable ones are run — the
 * CLI commands as written, the curl bodies against the HTTP API — on a real `taskline dev`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { runInNewContext } from 'node:vm';
import { EXAMPLE_TASKS } from '../../src/examples/definitions.js';
import { freePort } from '../scheduler/servers.js';
import { CliProcess, parseJson, runCli } from './helpers.js';

const ROOT = resolve(import.meta.dirname, '../..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const DEFINITIONS = new Map(EXAMPLE_TASKS.map((d) => [d.type, d]));

interface CodeBlock {
  language: string;
  text: string;
  /** 1-based line of the block's first line in the README. */
  line: number;
}

function codeBlocks(markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  const pattern = /^```(\w*)\n([\s\S]*?)^```$/gm;
  for (const match of markdown.matchAll(pattern)) {
    blocks.push({ language: match[1], text: match[2], line: markdown.slice(0, match.index).split('\n').length + 1 });
  }
  return blocks;
}

function lineOf(block: CodeBlock, index: number): number {
  return block.line + block.text.slice(0, index).split('\n').length - 1;
}

/** Shell command lines as words (quotes, `#` comments), with the offset of each line in its block. */
function shellCommands(text: string): { words: string[]; offset: number }[] {
  const commands: { words: string[]; offset: number }[] = [];
  let offset = 0;
  // A backslash-newline continues the command: keep the newline count for the offsets.
  for (const raw of text.split(/(?<!\\)\n/)) {
    const line = raw.replace(/\\\n/g, ' ');
    const start = offset;
    offset += raw.split('\n').length;
    const words: string[] = [];
    let word: string | null = null;
    for (let i = 0; i < line.length; i += 1) {
      const c = line[i];
      if (c === "'" || c === '"') {
        const end = line.indexOf(c, i + 1);
        if (end < 0) throw new Error(`unbalanced ${c} in README line: ${line}`);
        word = (word ?? '') + line.slice(i + 1, end);
        i = end;
      } else if (c === ' ' || c === '\t') {
        if (word !== null) words.push(word);
        word = null;
      } else if (c === '#' && word === null) break;
      else word = (word ?? '') + c;
    }
    if (word !== null) words.push(word);
    if (words.length > 0) commands.push({ words, offset: start });
  }
  return commands;
}

interface Example {
  where: string;
  type: string;
  payload: unknown;
  /** How to run it on `taskline dev`: CLI arguments, an HTTP body, or not at all (schedules). */
  run: { cli: string[] } | { http: Record<string, unknown>; headers: Record<string, string> } | null;
}

function readmeExamples(): Example[] {
  const examples: Example[] = [];
  for (const block of codeBlocks(README)) {
    const where = `README.md:${block.line}`;
    if (block.language === 'sh') {
      for (const { words, offset } of shellCommands(block.text)) {
        const at = `README.md:${block.line + offset}: ${words.join(' ')}`;
        const command = words.slice(0, 2).join(' ');
        if (command === 'taskline enqueue') {
          const [type, json] = [words[2], words[3] ?? '{}'];
          if (!DEFINITIONS.has(type)) continue;
          examples.push({ where: at, type, payload: JSON.parse(json) as unknown, run: { cli: words.slice(1) } });
        } else if (words[0] === 'curl' && words.includes('-d') && words.some((w) => /\/api\/v1\/tasks$/.test(w))) {
          const body = JSON.parse(words[words.indexOf('-d') + 1]) as Record<string, unknown>;
          const headers: Record<string, string> = {};
          words.forEach((w, i) => {
            if (w === '-H') {
              const [name, ...value] = words[i + 1].split(':');
              headers[name.trim()] = value.join(':').trim();
            }
          });
          examples.push({ where: at, type: body.type as string, payload: body.payload, run: { http: body, headers } });
        } else if (command === 'taskline schedule' && words.includes('--type') && words.includes('--payload')) {
          const type = words[words.indexOf('--type') + 1];
          examples.push({ where: at, type, payload: JSON.parse(words[words.indexOf('--payload') + 1]), run: null });
        }
      }
    } else if (block.language === 'json') {
      const config = JSON.parse(block.text) as { schedules?: { id: string; task: { type: string; payload?: unknown } }[] };
      for (const schedule of config.schedules ?? []) {
        examples.push({ where: `${where}: schedule ${schedule.id}`, type: schedule.task.type, payload: schedule.task.payload ?? {}, run: null });
      }
    } else if (block.language === 'ts') {
      for (const match of block.text.matchAll(/\.enqueue\('([^']+)', (\{[^}]*\})/g)) {
        const payload = runInNewContext(`(${match[2]})`, {}) as unknown;
        examples.push({ where: `README.md:${lineOf(block, match.index)}: ${match[0]}`, type: match[1], payload, run: { http: { type: match[1], payload }, headers: {} } });
      }
      for (const match of block.text.matchAll(/payload: (\{[^}]*\})/g)) {
        const type = /type: '([^']+)'/.exec(block.text.slice(Math.max(0, match.index - 80), match.index))?.[1];
        if (type !== undefined) examples.push({ where: `README.md:${lineOf(block, match.index)}: ${match[0]}`, type, payload: runInNewContext(`(${match[1]})`, {}) as unknown, run: null });
      }
    }
  }
  return examples.filter((example) => DEFINITIONS.has(example.type));
}

const examples = readmeExamples();

describe('the README example payloads', () => {
  it('document every example task type for the CLI and for curl', () => {
    const types = [...DEFINITIONS.keys()].sort();
    const viaCli = new Set(examples.filter((e) => e.run !== null && 'cli' in e.run).map((e) => e.type));
    const viaHttp = new Set(examples.filter((e) => e.run !== null && 'http' in e.run).map((e) => e.type));
    expect([...viaCli].sort()).toEqual(types);
    expect([...viaHttp].sort()).toEqual(types);
    expect(examples.some((e) => e.run === null)).toBe(true);
  });

  it.each(examples.map((e) => [e.where, e] as const))('match the type\'s schema: %s', (_where, example) => {
    const schema = DEFINITIONS.get(example.type)?.schema;
    if (schema === undefined) throw new Error(`${example.type} has no schema`);
    const parsed = schema.safeParse(example.payload);
    expect(parsed.success ? 'valid' : parsed.error.message).toBe('valid');
  });
});

describe('the README example commands, run on taskline dev', () => {
  let cwd: string;
  let dev: CliProcess;
  let api: string;

  beforeAll(async () => {
    cwd = mkdtempSync(join(tmpdir(), 'taskline-readme-'));
    const port = await freePort();
    api = `http://127.0.0.1:${port}`;
    dev = new CliProcess(['dev'], { cwd, env: { PORT: String(port) } });
    await dev.waitFor(/^ready/m, 30_000);
  }, 40_000);
  afterAll(async () => {
    dev.signal('SIGTERM');
    await Promise.race([dev.exited, new Promise((r) => setTimeout(r, 10_000))]);
    await dev.kill();
    rmSync(cwd, { recursive: true, force: true });
  }, 20_000);

  const runnable = examples.filter((e) => e.run !== null);
  it.each(runnable.map((e) => [e.where, e] as const))('completes: %s', async (_where, example) => {
    const run = example.run!;
    if ('cli' in run) {
      // As written, from the clone's root paths (dist/…), waiting for the result as JSON.
      const args = run.cli.map((arg) => (arg.startsWith('dist/') ? join(ROOT, arg) : arg));
      if (!args.includes('--wait')) args.push('--wait');
      const result = await runCli(['--json', ...args, '--wait-timeout', '30s'], { cwd, timeoutMs: 40_000 });
      expect(result.code, result.stderr).toBe(0);
      expect(parseJson(result)).toMatchObject({ type: example.type, state: 'completed', error: null });
      return;
    }
    const posted = await fetch(`${api}/api/v1/tasks`, { method: 'POST', headers: { 'content-type': 'application/json', ...run.headers }, body: JSON.stringify(run.http) });
    const created = (await posted.json()) as { task_id: string };
    expect(posted.status, JSON.stringify(created)).toBe(201);
    const status = (await (await fetch(`${api}/api/v1/tasks/${created.task_id}?wait=30`)).json()) as { state: string; error: string | null };
    expect(status).toMatchObject({ state: 'completed', error: null });
  }, 45_000);
});

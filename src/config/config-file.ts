/**
 * The optional config file: `taskline.config.json`, `taskline.config.mjs` (default export: an
 * object) or `taskline.config.yaml|yml` (needs the `yaml` package), in the working directory or
 * named by `--config` / `TASKLINE_CONFIG`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { TasklineError } from '../core/errors.js';
import { importUserModule } from './user-module.js';

export const CONFIG_FILE_NAMES = ['taskline.config.json', 'taskline.config.mjs', 'taskline.config.yaml', 'taskline.config.yml'] as const;

export interface ConfigFile {
  path: string;
  /** The parsed content: a plain object, not validated yet. */
  content: Record<string, unknown>;
}

function fileError(message: string, cause?: unknown): TasklineError {
  return new TasklineError('TL_INVALID_CONFIG', message, { cause, details: { setting: 'config file', source: 'file' } });
}

/** Finds the config file: the explicit path (which must exist), else one of CONFIG_FILE_NAMES in `cwd`. */
export function findConfigFile(cwd: string, explicit: string | undefined): string | null {
  if (explicit !== undefined) {
    const path = resolve(cwd, explicit);
    if (!existsSync(path)) {
      throw new TasklineError('TL_INVALID_CONFIG', `config file ${explicit} does not exist: give the path of a taskline.config.json, .mjs or .yaml file`, {
        details: { setting: 'config', source: 'flag' },
      });
    }
    return path;
  }
  const found = CONFIG_FILE_NAMES.map((name) => resolve(cwd, name)).filter((path) => existsSync(path));
  if (found.length > 1) throw fileError(`found ${found.map((p) => basename(p)).join(' and ')}: keep one config file`);
  return found[0] ?? null;
}

export async function readConfigFile(path: string): Promise<ConfigFile> {
  const name = basename(path);
  let content: unknown;
  if (path.endsWith('.mjs') || path.endsWith('.js')) {
    try {
      content = (await importUserModule(path)).default;
    } catch (error) {
      throw fileError(`${name} failed to load: ${(error as Error).message}`, error);
    }
  } else {
    const text = readText(path);
    if (path.endsWith('.yaml') || path.endsWith('.yml')) content = await parseYaml(name, text);
    else {
      try {
        content = JSON.parse(text);
      } catch (error) {
        throw fileError(`${name} is not valid JSON: ${(error as Error).message}`, error);
      }
    }
  }
  if (typeof content !== 'object' || content === null || Array.isArray(content)) {
    throw fileError(`${name} must hold an object of settings, e.g. {"backend": "sqlite:./taskline.db"}`);
  }
  return { path, content: content as Record<string, unknown> };
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw fileError(`cannot read ${path}: ${(error as Error).message}`, error);
  }
}

async function parseYaml(name: string, text: string): Promise<unknown> {
  // `yaml` is an optional peer: JSON and .mjs config files need nothing extra.
  const moduleName = 'yaml';
  let yaml: { parse(text: string): unknown };
  try {
    yaml = (await import(moduleName)) as { parse(text: string): unknown };
  } catch (error) {
    throw fileError(`${name} needs the "yaml" package (npm install yaml); or use taskline.config.json`, error);
  }
  try {
    return yaml.parse(text);
  } catch (error) {
    throw fileError(`${name} is not valid YAML: ${(error as Error).message.split('\n')[0]}`, error);
  }
}

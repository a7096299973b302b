/** image:resize: reads a PPM (or generates a test card), resizes it bilinearly, writes a PPM. */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join, relative, resolve, isAbsolute } from 'node:path';
import { PermanentError } from '../core/errors.js';
import type { TaskContext } from '../worker/context.js';
import type { ExampleOptions } from './options.js';
import { decodePpm, encodePpm, resizeBilinear, testCard, type RgbImage } from './ppm.js';

export interface ResizePayload {
  input?: string;
  width: number;
  height: number;
}

export function imageResizeHandler(options: ExampleOptions) {
  return async (payload: ResizePayload, ctx: TaskContext) => {
    const source = payload.input === undefined ? testCard(512, 512) : readInput(options.dataDir, payload.input);
    const resized = resizeBilinear(source, payload.width, payload.height);
    const dir = join(options.dataDir, 'images');
    mkdirSync(dir, { recursive: true });
    const path = join(dir, `${ctx.task.id.replace(/[^A-Za-z0-9._-]/g, '_')}-${payload.width}x${payload.height}.ppm`);
    const encoded = encodePpm(resized);
    writeFileSync(`${path}.tmp`, encoded);
    renameSync(`${path}.tmp`, path);
    ctx.log(`resized ${source.width}x${source.height} → ${payload.width}x${payload.height}: ${path}`);
    return {
      path,
      from: { width: source.width, height: source.height },
      to: { width: payload.width, height: payload.height },
      bytes: encoded.length,
      sha256: createHash('sha256').update(encoded).digest('hex'),
    };
  };
}

/** Inputs are read from inside the data directory only (a payload must not read arbitrary files). */
function readInput(dataDir: string, input: string): RgbImage {
  const path = resolve(dataDir, input);
  const inside = relative(dataDir, path);
  if (inside.startsWith('..') || isAbsolute(inside)) throw new PermanentError(`input ${JSON.stringify(input)} is outside the examples' data directory ${dataDir}`);
  let data: Buffer;
  try {
    data = readFileSync(path);
  } catch (error) {
    throw new PermanentError(`cannot read input ${input}: ${(error as Error).message}`);
  }
  try {
    return decodePpm(data);
  } catch (error) {
    throw new PermanentError(`input ${input}: ${(error as Error).message}`);
  }
}

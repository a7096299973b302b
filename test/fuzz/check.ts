/**
 * What every answer must be: below 500, in time, an error body of exactly
 * `{"error":{"code":"TL_…","message":"…"}}` when not 2xx, and a 2xx body that fits the route's
 * documented schema.
 */
import { validate } from './json-schema.js';
import type { Operation } from './openapi.js';
import type { Answer } from './send.js';

const UNOWNED = new Set([401, 403, 404, 405, 408, 431]);

/** Longest error message an answer may carry. */
export const MAX_MESSAGE = 1_000;

export function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

function errorBodyProblems(text: string, allowTasks: boolean): string[] {
  const parsed = parseJson(text);
  if (!parsed.ok) return [`error body is not JSON (${JSON.stringify(text.slice(0, 80))})`];
  const body = parsed.value as Record<string, unknown>;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return ['error body is not an object'];
  const extra = Object.keys(body).filter((k) => k !== 'error' && !(allowTasks && k === 'tasks'));
  const problems: string[] = extra.length > 0 ? [`error body has other keys: ${extra.join(', ')}`] : [];
  const error = body.error as Record<string, unknown> | undefined;
  if (typeof error !== 'object' || error === null) return [...problems, 'error body has no error object'];
  const inner = Object.keys(error).filter((k) => k !== 'code' && k !== 'message');
  if (inner.length > 0) problems.push(`error object has other keys: ${inner.join(', ')}`);
  if (typeof error.code !== 'string' || !/^TL_[A-Z0-9_]+$/.test(error.code)) problems.push(`error code is not TL_… (${JSON.stringify(error.code)})`);
  if (typeof error.message !== 'string' || error.message.length === 0) problems.push('error message is empty or not a string');
  else if (error.message.length > MAX_MESSAGE) problems.push(`error message longer than ${MAX_MESSAGE} characters (${error.message.length})`);
  return problems;
}

/** The problems with one answer; `op` is the operation the router reached (null: none). */
export function answerProblems(op: Operation | null, method: string, answer: Answer): string[] {
  if (answer.timedOut) return ['no answer within 10 s'];
  if (answer.refused !== null) return [];
  const problems: string[] = [];
  if (answer.status >= 500) problems.push(`status ${answer.status} (${errorCode(answer) ?? 'no code'})`);
  // Every status an operation answers is in its OpenAPI entry — except those no operation owns:
  // a path no route takes (404, 405), the parser's refusals (408, 431) and auth on the
  // token-guarded server (whose answers are checked against the open server's document).
  if (op && !UNOWNED.has(answer.status) && !op.responses.has(answer.status)) problems.push(`status ${answer.status} is not documented for ${op.route}`);
  if (method === 'HEAD' || (op?.streams && answer.status === 200)) return problems;
  if (answer.status < 200 || answer.status >= 300) {
    return [...problems, ...errorBodyProblems(answer.body, op?.route === 'POST /api/v1/tasks' && answer.status === 409)];
  }
  const schema = op?.responses.get(answer.status);
  if (!op || !schema) return problems;
  const parsed = parseJson(answer.body);
  if (!parsed.ok) return [...problems, `${answer.status} body is not JSON`];
  return [...problems, ...validate(schema, parsed.value).map((p) => `response schema: ${p}`)];
}

/** The error code of an answer, when it has one. */
export function errorCode(answer: Answer): string | null {
  const parsed = parseJson(answer.body);
  if (!parsed.ok) return null;
  const code = (parsed.value as { error?: { code?: unknown } } | null)?.error?.code;
  return typeof code === 'string' ? code : null;
}

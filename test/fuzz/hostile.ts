/**
 * The values a mutation puts where a valid one was: numbers past every bound, strings no store
 * expects, cron text that names object keys, path segments that are not one, and the rest.
 */
import { deepArray, deepObject, Raw, setKey } from './json-text.js';
import type { Rng } from './rng.js';

export const HUGE_NUMBERS: readonly number[] = [
  9007199254740991, 9007199254740992, 1e300, -1, 1.5, 0, -0, 0.1, 2147483648, 4294967296, 8640000000000000, 8640000000000001,
  -8640000000000001, 5e-324, 1e21, 253402300800000, 1e15, -9007199254740991,
];

/** Number text JSON.stringify cannot write. */
export const RAW_NUMBERS: readonly string[] = ['1e400', '-1e400', '1e-400', '-0', '123456789012345678901234567890', '1.0', '1E3'];

/** Numbers as a query parameter carries them. */
export const NUMERIC_TEXT: readonly string[] = [
  'NaN', 'Infinity', '-Infinity', '1e300', '-1', '1.5', '0x10', ' 1', '', '9007199254740991', '9007199254740993', '1e-300', '00',
  '+1', '1_000', '٣', '8640000000000001', '1e400', 'true', 'null', '0b1', '1,2',
];

/** ISO-ish times at and past what a Date can hold, and dates that do not exist. */
export const TIMES: readonly string[] = [
  '+275760-09-13T00:00:00.000Z', '+275760-09-13T00:00:00.001Z', '-271821-04-20T00:00:00.000Z', '0000-01-01T00:00:00Z', '9999-12-31T23:59:59Z',
  '2024-02-30T00:00:00Z', '2024-01-01T25:00:00Z', '2024-01-01T00:00:00+99:00', '1970-01-01T00:00:00.000Z', '2024-01-01', '2024-01-01T00:00:00',
  '1969-12-31T23:59:59.999Z', '2024-01-01T00:00:00.123456789Z', '20240101T000000Z', 'yesterday', '',
];

export const GOOD_CRONS: readonly string[] = [
  '* * * * *', '*/5 * * * *', '0 * * * *', '0 9 * * 1-5', '30 2 * * *', '0 0 1 * *', '15 3 * * 0', '0 12 * * *', '@hourly', '@daily', '*/15 * * * *',
];

export const BAD_CRONS: readonly string[] = [
  'constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', '@every 999999999h', '@every 0s', '@every -1s', '@every 1ms', '@every 1.5s',
  '@every 1e300s', '@every NaNs', '@every 9007199254740991ms', '* * * * * * *', '61 * * * *', '*/0 * * * *', '0 0 30 2 *', '0 0 31 4 *', '@reboot',
  '@yearly', ' ', '\u0000', 'L * * * *', '* * * * 8', '1-0 * * * *', '*/1000000000 * * * *', '? ? ? ? ?', '* * * * * *', '0 0 0 1 1 ? 2099',
  `${Array.from({ length: 60 }, (_, i) => i).join(',')} * * * *`, '* * * * *\n* * * * *', '\ud800 * * * *', '* * * * MON#5', '0 0 29 2 1', '@every 1h30m',
];

export const GOOD_ZONES: readonly string[] = ['UTC', 'Europe/Paris', 'America/New_York', 'Asia/Kathmandu', 'Australia/Lord_Howe', 'Etc/GMT+12'];

export const BAD_ZONES: readonly string[] = ['Mars/Olympus', '', 'utc', '+05:00', 'constructor', '__proto__', 'Europe/../../etc/passwd', 'Etc/GMT+99', '\ud800', 'Z'];

/** Duration text (jitter, catch-up window). */
export const DURATION_TEXT: readonly string[] = ['1h', '5m', '30s', '999999999h', '-1s', '1e300ms', 'P1D', '', 'NaN', '1.5h', '0', '9007199254740991d', 'constructor'];

/** Path segments as they go into the URL (already encoded, or meant not to be). */
export const PATH_SEGMENTS: readonly string[] = [
  '%zz', '%', '%2F', 'a%2Fb', '..', '.', '%2e%2e', '%2e%2e%2f%2e%2e', 'x'.repeat(201), 'x'.repeat(501), 'x'.repeat(5000), '%00', '%0a', '%ED%A0%80',
  '%F0%9F%98%80', '%C3%A9', '__proto__', 'constructor', '%20', '+', '~', 'null', 'undefined', '%3B', '%3F', '%23', '%FF', '%C0%AF', '*', '%2A',
  'a%00b', '-', '_', 'hasOwnProperty', '%5Cx', '1e300', 'NaN',
];

/** Junk appended to a query string as is. */
export const QUERY_JUNK: readonly string[] = [
  '%zz=1', '&&&', '=', 'a[b]=1', 'a=%00', '__proto__=1', 'constructor[prototype]=1', '__proto__[x]=1', 'x', '%ED%A0%80=1', 'a=1&a=2', '?', '#x',
  `q=${'y'.repeat(10_000)}`, 'toString=1', 'hasOwnProperty=x', ';=;',
];

export const CONTENT_TYPES: readonly (string | null)[] = [
  null, 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=latin1',
  'application/json; charset=utf-16', 'application/json, text/plain', 'APPLICATION/JSON', 'application/json;;', 'application/vnd.api+json',
  'application/jsonx', 'application/octet-stream', '', 'application/json; charset=utf-8', `application/json; x=${'y'.repeat(3000)}`,
];

/** Authorization headers a server with tokens refuses (latin-1 only: inject refuses others). */
export const AUTH_HEADERS: readonly string[] = [
  'Bearer', 'Bearer ', `Bearer ${'x'.repeat(10_000)}`, 'Basic Zm9vOmJhcg==', 'bearer token', 'Bearer a b', 'Token abc', '\u00ff\u00fe', 'Bearer \t',
  'Bearer null', 'Bearer __proto__',
];

export const JUNK_KEYS: readonly string[] = ['__proto__', 'constructor', 'prototype', '', ' ', 'x', 'payload', 'é', '\ud800', '\u0000', 'toString', 'a'.repeat(300)];

/** Request bodies that are not a JSON document. */
export const RAW_BODIES: readonly string[] = [
  '', ' ', '{', '{"a":', 'nul', '\u0000', '[]]', '{"a":1}x', '\ufeff{}', "{'a':1}", '{"a":NaN}', '{"a":Infinity}', '{"a":undefined}', '{"a":1,}',
  '/* */ {}', '"\\ud800"', '"\\u0000"', 'true', '0', '-', '{"__proto__":{"polluted":true}}', '{"constructor":{"prototype":{"polluted":true}}}',
  '\n\n', '\t{}\t',
];

let bigStrings: string[] | null = null;

/** Strings of about 1 MB (built once): under and over the payload limit once encoded. */
export function bigString(rng: Rng): string {
  bigStrings ??= ['x'.repeat(1_000_000), 'é'.repeat(500_000), 'x'.repeat(1_048_577), '😀'.repeat(200_000), '\ud800'.repeat(150_000)];
  return rng.pick(bigStrings);
}

export function hostileString(rng: Rng): string {
  return rng.weighted<() => string>([
    [3, () => rng.pick(['', ' ', '\ud800', '\udfff', 'a\ud800b', '\udc00\ud800', '\u0000', '\u0001\u001f\u007f', '\n\r\t', 'é', '😀', '\u202e', '\ufeff'])],
    [3, () => rng.pick(['null', 'NaN', 'Infinity', '-1', '1e300', '__proto__', 'constructor', 'toString', '../../etc/passwd', '%00', '<script>', "'; DROP TABLE tasks;--", '{"a":1}'])],
    [2, () => rng.pick(['a'.repeat(101), 'a'.repeat(201), 'a'.repeat(501), 'a'.repeat(1001), 'a'.repeat(5000), 'é'.repeat(300)])],
    [2, () => rng.pick(TIMES)],
    [1, () => rng.pick([...BAD_CRONS, ...BAD_ZONES, ...DURATION_TEXT])],
    [1, () => rng.pick(NUMERIC_TEXT)],
    [1, () => rng.text(rng.int(1, 30), 'ab\u0000\ud800\udfffé😀/%\\"\'<>{}\n ')],
    [0.15, () => bigString(rng)],
  ])();
}

/** A value of any JSON type, chosen to break whatever expected something else. */
export function hostileValue(rng: Rng): unknown {
  return rng.weighted<() => unknown>([
    [4, () => rng.pick(HUGE_NUMBERS)],
    [2, () => new Raw(rng.pick(RAW_NUMBERS))],
    [5, () => hostileString(rng)],
    [1, () => null],
    [1, () => rng.chance(0.5)],
    [1, () => rng.pick([[], {}, [1, 2], [null], [[]], { a: 1 }, ['x']])],
    [0.5, () => {
      const polluted: Record<string, unknown> = {};
      setKey(polluted, '__proto__', { polluted: true });
      return polluted;
    }],
    [0.3, () => (rng.chance(0.5) ? deepArray(rng.pick([100, 5000, 20_000])) : deepObject(rng.pick([100, 5000, 20_000])))],
  ])();
}

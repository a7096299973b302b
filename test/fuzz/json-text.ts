/**
 * JSON text the fuzzer sends: values JSON.stringify cannot write (1e400, deep nesting, an own
 * `__proto__` key) travel as `Raw` fragments or are set with `setKey`.
 */

/** A fragment of JSON text placed as is, e.g. `1e400` (which parses to Infinity). */
export class Raw {
  constructor(readonly text: string) {}
}

/** Sets an own, enumerable property, even `__proto__` (plain assignment would set the prototype). */
export function setKey(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** JSON text of a value that may hold `Raw` fragments; lone surrogates are escaped (`\ud800`). */
export function encodeJson(value: unknown): string {
  if (value instanceof Raw) return value.text;
  if (value === undefined) return 'null';
  if (Array.isArray(value)) return `[${value.map(encodeJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}:${encodeJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Nested arrays `depth` deep, as text (building the value itself would be as deep). */
export function deepArray(depth: number): Raw {
  return new Raw('['.repeat(depth) + ']'.repeat(depth));
}

/** Nested objects `depth` deep, as text. */
export function deepObject(depth: number): Raw {
  return new Raw('{"a":'.repeat(depth) + '1' + '}'.repeat(depth));
}

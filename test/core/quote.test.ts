import { describe, expect, it } from 'vitest';
import { quote, QUOTE_LIMIT } from '../../src/core/validate.js';

describe('a bad value quoted in an error', () => {
  it('is the JSON of a short string, whole', () => {
    expect(quote('abc')).toBe('"abc"');
    expect(quote('x\\y')).toBe('"x\\\\y"');
  });

  it('is cut near the limit, saying how long the text was', () => {
    expect(quote('a'.repeat(500))).toBe(`"${'a'.repeat(QUOTE_LIMIT)}"… (500 characters)`);
  });

  it('stays near the limit when escapes make the JSON longer than the text (a lone surrogate is six characters), cut between escapes', () => {
    for (const text of ['\ud800'.repeat(300), '\ud800'.repeat(QUOTE_LIMIT), '\u0001'.repeat(50)]) {
      const quoted = quote(text);
      expect(quoted.length, JSON.stringify(text.slice(0, 3))).toBeLessThanOrEqual(QUOTE_LIMIT + 30);
      expect(quoted).toMatch(/^"(\\u[0-9a-f]{4})*"… \(\d+ characters\)$/);
    }
  });
});

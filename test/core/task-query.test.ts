import { describe, expect, it } from 'vitest';
import { isTasklineError } from '../../src/core/errors.js';
import { emptyFilter, filterKey, parseTaskQuery } from '../../src/core/task-query.js';

function refusal(query: string): string {
  try {
    parseTaskQuery(query);
  } catch (error) {
    expect(isTasklineError(error, 'TL_INVALID_REQUEST')).toBe(true);
    return (error as Error).message;
  }
  throw new Error(`${query} was accepted`);
}

describe('parseTaskQuery', () => {
  it('reads every kind of term into one filter', () => {
    expect(parseTaskQuery('  ')).toEqual(emptyFilter());
    expect(
      parseTaskQuery('id:a-1 type:email:deliver queue:mail state:dead err:"Connection REFUSED" after:2026-03-01 before:2026-03-01T09:30:00+01:00 payload.user.id:42 payload.name:"Ada L" payload.tag:x payload:"Ada Lovelace" Email:Deliver'),
    ).toEqual({
      id: 'a-1', type: 'email:deliver', queue: 'mail', states: ['dead'], errors: ['connection refused'],
      createdAfter: Date.parse('2026-03-01T00:00:00Z'), createdBefore: Date.parse('2026-03-01T08:30:00Z'),
      payload: [{ path: ['user', 'id'], value: 42 }, { path: ['name'], value: 'Ada L' }, { path: ['tag'], value: 'x' }],
      texts: ['ada lovelace'],
      words: ['email:deliver'],
    });
  });

  it('reads payload values as JSON when they parse, else as text', () => {
    const values = (q: string) => parseTaskQuery(q).payload.map((p) => p.value);
    expect(values('payload.a:42 payload.a:"42" payload.a:true payload.a:null payload.a:{"b":[1]} payload.a:4x payload.a:"a\\"b"')).toEqual([42, '42', true, null, { b: [1] }, '4x', 'a"b']);
  });

  it('the same term twice is one term; the same key with another value is refused', () => {
    expect(parseTaskQuery('state:dead state:dead').states).toEqual(['dead']);
    expect(refusal('state:dead state:queued')).toMatch(/^q term "state:queued" repeats state: with another value/);
    expect(parseTaskQuery('err:a err:b').errors).toEqual(['a', 'b']);
  });

  it('names the term and the accepted form of each mistake', () => {
    expect(refusal('state:finished')).toBe('q term "state:finished" has no state "finished"; the accepted form is state:<state>, one of scheduled, queued, running, retrying, completed, dead, cancelled');
    expect(refusal('after:2026-03-01T09:00')).toMatch(/^q term "after:2026-03-01T09:00" is not an ISO-8601 time; the accepted form is after:<ISO-8601 time>/);
    expect(refusal('before:2026-13-45')).toMatch(/is not an ISO-8601 time/);
    expect(refusal('id:')).toMatch(/^q term "id:" needs a value; the accepted form is id:<task id>$/);
    expect(refusal('payload.:1')).toMatch(/has an empty key/);
    expect(refusal('payload.a:')).toMatch(/needs a value; the accepted form is payload\.<key>/);
    expect(refusal('payload:')).toMatch(/^q term "payload:" needs a text; the accepted form is payload\.<key>.*or payload:<text>/);
    expect(refusal('x "open')).toBe('q has a double quote at character 3 that is not closed');
    expect(refusal('x'.repeat(2001))).toBe('q is longer than 2000 characters');
  });

  it('keys a filter by its terms, not their spelling', () => {
    expect(filterKey(parseTaskQuery('state:dead  type:a'))).toBe(filterKey(parseTaskQuery('type:a state:dead')));
    expect(filterKey(parseTaskQuery('type:a'))).not.toBe(filterKey(parseTaskQuery('type:b')));
  });
});

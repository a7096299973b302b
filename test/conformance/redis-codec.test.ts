import { describe, expect, it } from 'vitest';
import { decodeInputs, decodeRecord, encodeAttempt, encodeRecordFragment, type FragmentSource } from '../../src/backend/redis/codec.js';
import type { AttemptRecord } from '../../src/core/task.js';

const META = '{"s":"cancelled","f":23,"a":2,"sa":10,"w":"w-1","c":1,"e":1,"t":"mail","m":3,"o":1000}';

describe('Redis attempt records', () => {
  const attempts: AttemptRecord[] = [
    { attempt: 1, startedAt: 10, finishedAt: 12, outcome: 'failed', error: 'boom "quoted"', stack: 'Error: boom\n    at x', workerId: 'w-1' },
    { attempt: 2, startedAt: 15, finishedAt: 20, outcome: 'completed', error: null, stack: null, workerId: 'w-2' },
    { attempt: 3, startedAt: 21, finishedAt: null, outcome: 'interrupted', error: 'worker shut down', stack: null, workerId: null },
    { attempt: 3, startedAt: 22, finishedAt: 23, outcome: 'cancelled', error: 'cancelled by operator', stack: null, workerId: 'w-3' },
  ];

  it('are stored in the short form, without null members, and read back the same', () => {
    const stored = `[${attempts.map(encodeAttempt).join(',')}]`;
    expect(encodeAttempt(attempts[1])).toBe('{"n":2,"s":15,"o":"c","f":20,"w":"w-2"}');
    expect(stored.length).toBeLessThan(JSON.stringify(attempts).length * 0.7);
    expect(decodeRecord('q', 'id-1', META, { attempts: stored }).attempts).toEqual(attempts);
  });

  it('of a completed task end with the completing attempt, which is not stored but read from the record', () => {
    const completed = '{"s":"completed","f":20,"a":2,"sa":15,"w":"w-2","c":1,"e":1,"t":"mail","m":3,"o":1000}';
    expect(decodeRecord('q', 'id-1', completed, { attempts: `[${encodeAttempt(attempts[0])}]` }).attempts).toEqual([attempts[0], attempts[1]]);
    expect(decodeRecord('q', 'id-1', completed, {}).attempts).toEqual([{ ...attempts[1], attempt: 2 }]);
    // Stored by an earlier version: read as it is, not doubled.
    expect(decodeRecord('q', 'id-1', completed, { attempts: `[${encodeAttempt(attempts[0])},${encodeAttempt(attempts[1])}]` }).attempts).toEqual([attempts[0], attempts[1]]);
  });

  it('written in the long form by earlier versions are still read', () => {
    const stored = JSON.stringify([attempts[0], attempts[1]]);
    expect(decodeRecord('q', 'id-1', META, { attempts: stored }).attempts).toEqual([attempts[0], attempts[1]]);
  });

  it('mixed in one list (an old attempt, then a new one) are read each in its form', () => {
    const stored = `[${JSON.stringify(attempts[0])},${encodeAttempt(attempts[1])}]`;
    expect(decodeRecord('q', 'id-1', META, { attempts: stored }).attempts).toEqual([attempts[0], attempts[1]]);
  });
});

describe('Redis record fragments and node inputs', () => {
  const bare: FragmentSource = { type: 'mail', maxRetries: 3, timeout: 1000, deadline: null, retention: null, backoff: null, headers: null };
  const full: FragmentSource = {
    type: 'm"a\\il/é', maxRetries: 0, timeout: 1.5, deadline: 2e12, uniqueKey: 'k\n', retention: 60_000,
    backoff: { type: 'exponential', base: 100, max: 5000 }, headers: { 'x-a': 'b"' }, links: { parentId: 'p' },
  };

  it('are the members JSON.stringify writes, in the order t, m, o, d, u, r, b, h, l', () => {
    expect(encodeRecordFragment(bare)).toBe('"t":"mail","m":3,"o":1000');
    const expected = JSON.stringify({ t: full.type, m: 0, o: 1.5, d: 2e12, u: full.uniqueKey, r: 60_000, b: full.backoff, h: full.headers, l: full.links }).slice(1, -1);
    expect(encodeRecordFragment(full)).toBe(expected);
    expect(JSON.parse(`{${encodeRecordFragment(bare, { workflowId: 'w', workflowNode: 'n' })}}`)).toEqual({ t: 'mail', m: 3, o: 1000, l: { workflowId: 'w', workflowNode: 'n' } });
  });

  it('read node inputs from their flat JSON form; anything else reads as none (the worker then asks the workflow)', () => {
    expect(decodeInputs('[]')).toEqual({ parents: [] });
    expect(decodeInputs('["a","completed","1",false,"b","dead",false,"boom"]')).toEqual({
      parents: [{ id: 'a', state: 'completed', result: '1', error: null }, { id: 'b', state: 'dead', result: null, error: 'boom' }],
    });
    // cjson writes an empty list as {} when a script re-encodes a record.
    expect(decodeInputs('{}')).toEqual({ parents: [] });
    for (const bad of ['["a"', '{"a":1}', 'null', '']) expect(decodeInputs(bad)).toBeUndefined();
  });
});

/**
 * Redis-only: records the backend would refuse today, written straight into Redis (as an older
 * version, or a hand, may have left them). cjson cannot decode a lone UTF-16 surrogate escape
 * (`"\ud800"`, which JSON.stringify writes), so before decode_json (lua/lib/json.lua) one such
 * header failed every script that read its task: the queue's counts (GET /api/v1/queues and
 * /stats, for everyone), claims, acks, fire history. Now such a record is read with U+FFFD in
 * place of the lone half, and reads skip what they cannot decode at all.
 */
import type { Redis } from 'ioredis';
import { beforeEach, describe, expect, it } from 'vitest';
import type { RedisBackend } from '../../src/backend/redis/redis-backend.js';
import { unreadableFields } from '../../src/backend/shared.js';
import { batch, enqueueFire } from '../../src/backend/conformance/scheduling-harness.js';
import { claimTask, completeAck, enqueueOne, WORKER } from '../../src/backend/conformance/harness.js';
import { complete, newWorkflow, taskIds } from '../../src/backend/conformance/workflow-harness.js';
import { workflowInputsOf } from '../../src/worker/workflow-inputs.js';
import { useRawRedis } from '../helpers/raw-redis.js';

describe('Redis: records with lone surrogates or corrupt JSON', () => {
  const raw = useRawRedis();
  let backend: RedisBackend;
  let redis: Redis;
  beforeEach(() => ({ backend, redis } = raw));

  /** Rewrites a task's stored record; the type member first, so claims take the decoding path. */
  async function rewriteMeta(id: string, change: (m: Record<string, unknown>) => void, queue = 'default'): Promise<void> {
    const key = backend.keys.queueKey(queue, 'meta');
    const m = JSON.parse((await redis.hget(key, id))!) as Record<string, unknown>;
    change(m);
    const { t, ...rest } = m;
    await redis.hset(key, id, JSON.stringify({ t, ...rest }));
  }

  it('counts, lists, claims, completes and operates on tasks whose type or header holds a lone surrogate', async () => {
    const ids = [await enqueueOne(backend), await enqueueOne(backend), await enqueueOne(backend)];
    await rewriteMeta(ids[0], (m) => (m.h = { note: '\ud800' }));
    await rewriteMeta(ids[1], (m) => (m.t = 'bad\udc00type'));
    await rewriteMeta(ids[2], (m) => (m.h = { '\ud83d': 'x', pair: '\ud83d\ude00' }));
    const raw = await redis.hget(backend.keys.queueKey('default', 'meta'), ids[0]);
    expect(raw).toContain('\\ud800');

    // The oldest queued task is read for the latency: the queue still lists.
    const [queue] = await backend.listQueues();
    expect(queue).toMatchObject({ name: 'default', counts: { queued: 3 } });
    expect(await backend.getTask(ids[0])).toMatchObject({ headers: { note: '\ud800' } });

    const [claim] = await backend.claim(WORKER, [{ queue: 'default', count: 3 }], 30_000);
    expect(claim.tasks.map((t) => t.id).sort()).toEqual([...ids].sort());
    // Re-encoded by the claim: the lone half is U+FFFD now; a pair stays.
    expect((await backend.getTask(ids[0]))!.headers).toEqual({ note: '\ufffd' });
    expect((await backend.getTask(ids[1]))!.type).toBe('bad\ufffdtype');
    expect((await backend.getTask(ids[2]))!.headers).toEqual({ '\ufffd': 'x', pair: '😀' });
    const byId = new Map(claim.tasks.map((t) => [t.id, t]));
    expect(await backend.ack([completeAck(byId.get(ids[0])!), completeAck(byId.get(ids[1])!)])).toEqual(['ok', 'ok']);
    expect(await backend.cancelTask(ids[2])).toBe('cancel-requested');
    expect((await backend.getQueue('default'))!.counts).toMatchObject({ completed: 2, running: 1 });
  });

  it('deletes a record with no state or a state of no version, one task and in bulk', async () => {
    const ids = [await enqueueOne(backend), await enqueueOne(backend), await enqueueOne(backend)];
    await rewriteMeta(ids[0], (m) => delete m.s);
    await rewriteMeta(ids[1], (m) => (m.s = 'paused'));
    await backend.deleteTask(ids[0]);
    await backend.deleteTask(ids[1]);
    expect(await backend.getTask(ids[0])).toBeNull();
    expect(await backend.getTask(ids[1])).toBeNull();
    // In bulk, listed as queued: the damaged record goes with the others.
    await rewriteMeta(ids[2], (m) => delete m.s);
    expect(await backend.deleteAll('default', 'queued')).toBe(1);
    expect(await backend.getTask(ids[2])).toBeNull();
  });

  it('a queue whose oldest queued record is not JSON at all still lists, with an unknown latency', async () => {
    const id = await enqueueOne(backend);
    await enqueueOne(backend);
    await redis.hset(backend.keys.queueKey('default', 'meta'), id, '{not json');
    const [queue] = await backend.listQueues();
    expect(queue).toMatchObject({ name: 'default', latency: 0, counts: { queued: 2 } });
  });

  it('reads a task whose record is not JSON, with the state of the structure holding it, noted unreadable', async () => {
    const queued = await enqueueOne(backend);
    const scheduled = await enqueueOne(backend, 't', {}, { delay: 3_600_000 });
    for (const id of [queued, scheduled]) await redis.hset(backend.keys.queueKey('default', 'meta'), id, '{"t":"half');
    const record = (await backend.getTask(queued))!;
    expect(record).toMatchObject({ id: queued, state: 'queued', type: '', payload: {}, createdAt: Number.NaN });
    expect(unreadableFields(record)).toEqual(['record']);
    expect((await backend.getTask(scheduled))!.state).toBe('scheduled');
    const page = await backend.listTasks('default', 'scheduled');
    expect(page.tasks.map((t) => [t.id, t.state])).toEqual([[scheduled, 'scheduled']]);
  });

  it('fire history lists fires whose task record holds a lone surrogate, or whose own record is corrupt', async () => {
    const fires = [enqueueFire('s', 60_000), enqueueFire('s', 120_000), enqueueFire('s', 180_000)];
    await backend.fire([batch('s', fires)]);
    await rewriteMeta(fires[0].fireId, (m) => (m.h = { note: '\ud800' }));
    await redis.hset(backend.keys.queueKey('default', 'fires'), fires[1].fireId, '{"f":');
    const history = await backend.listFires('s', 'default', 10);
    expect(history.map((f) => f.fireId)).toEqual([fires[2].fireId, fires[1].fireId, fires[0].fireId]);
    expect(history[2]).toMatchObject({ outcome: 'enqueued', taskState: 'queued' });
    expect(history[1]).toMatchObject({ fireId: fires[1].fireId, nominalAt: Number.NaN, outcome: '' });
    expect(unreadableFields(history[1])).toEqual(['record']);
    expect(unreadableFields(history[0])).toEqual([]);
  });

  it('reads a payload, result or progress that is not JSON as its text, and says so', async () => {
    const id = await enqueueOne(backend);
    await redis.hset(backend.keys.queueKey('default', 'payload'), id, '{"half":');
    await redis.hset(backend.keys.queueKey('default', 'result'), id, 'not json');
    const record = (await backend.getTask(id))!;
    expect(record).toMatchObject({ payload: '{"half":', result: 'not json' });
    expect(unreadableFields(record)).toEqual(['payload', 'result']);
  });

  it('a workflow node whose stored inputs are not readable is claimed without them; its worker reads them from the workflow', async () => {
    const wf = newWorkflow([{ id: 'a' }, { id: 'b', dependsOn: ['a'] }]);
    await backend.createWorkflow(wf);
    await complete(backend, wf, 'a', { n: 1 });
    // The inputs are the record's last member ("wi", codec.ts).
    const meta = backend.keys.queueKey('default', 'meta');
    const record = (await redis.hget(meta, taskIds(wf).b))!;
    expect(record).toContain(',"wi":["a","completed",');
    await redis.hset(meta, taskIds(wf).b, record.replace(/,"wi":.*\}$/, ',"wi":"unreadable"}'));
    const claimed = await claimTask(backend, taskIds(wf).b);
    expect(claimed.inputs).toBeUndefined();
    const parents = [{ id: 'a', state: 'completed', result: '{"n":1}', error: null }];
    expect(await workflowInputsOf(backend, [claimed])).toEqual([{ parents }]);
  });
});

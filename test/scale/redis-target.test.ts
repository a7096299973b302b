import { describe, expect, it } from 'vitest';
import { connect, isTasklineError } from '../../src/index.js';
import { redisTarget } from '../../src/backend/redis/target.js';

describe('Redis URLs: one server, Sentinels, a Cluster, durability', () => {
  it('reads a Sentinel URL: the Sentinels, the master name, the database, credentials and options', () => {
    const target = redisTarget('redis+sentinel://app:s3cret@10.0.0.1:26379,10.0.0.2:26380/main/2?durability=replicated&replicas=2&waitTimeout=800&sentinelPassword=x');
    expect(target).toMatchObject({ durability: 'replicated', replicas: 2, waitTimeoutMs: 800, db: 2 });
    expect(target.connectTo).toEqual({
      sentinels: [{ host: '10.0.0.1', port: 26379 }, { host: '10.0.0.2', port: 26380 }], name: 'main', db: 2, username: 'app', password: 's3cret', sentinelPassword: 'x',
    });
    expect(redisTarget('redis://127.0.0.1:6379/3?durability=replicated')).toMatchObject({ connectTo: 'redis://127.0.0.1:6379/3', db: 3, durability: 'replicated', replicas: 1, waitTimeoutMs: 5000 });
    expect(redisTarget('redis://127.0.0.1:6379')).toMatchObject({ durability: 'acknowledged' });
  });

  it('reads a Cluster URL: the nodes to start from, credentials and options', () => {
    const target = redisTarget('redis+cluster://app:s3cret@10.0.0.1:7000,10.0.0.2:7001?durability=replicated&waitTimeout=900');
    expect(target).toMatchObject({ durability: 'replicated', replicas: 1, waitTimeoutMs: 900, db: 0 });
    expect(target.cluster).toEqual({ nodes: [{ host: '10.0.0.1', port: 7000 }, { host: '10.0.0.2', port: 7001 }], username: 'app', password: 's3cret' });
    expect(redisTarget('redis+cluster://10.0.0.1:7000').cluster).toEqual({ nodes: [{ host: '10.0.0.1', port: 7000 }] });
  });

  it('refuses a bad one with TL_INVALID_CONFIG naming what is wrong, without the password', async () => {
    const bad: [string, RegExp][] = [
      ['redis+sentinel://10.0.0.1:26379', /give the master's name/],
      ['redis+sentinel://10.0.0.1/main', /each Sentinel is host:port, got "10.0.0.1"/],
      ['redis+sentinel://10.0.0.1:26379/main/x', /the database must be a whole number/],
      ['redis://u:pw@127.0.0.1:6379?durability=always', /durability must be acknowledged or replicated, got "always"/],
      ['redis://127.0.0.1:6379?replicas=0', /replicas must be a whole number from 1 to 100/],
      ['redis://127.0.0.1:6379?color=red', /unknown option "color"; accepted: durability/],
      ['redis://127.0.0.1:6379?sentinelPassword=x', /sentinelPassword goes with redis\+sentinel:\/\/ only/],
      ['redis+cluster://10.0.0.1:7000?sentinelPassword=x', /sentinelPassword goes with redis\+sentinel:\/\/ only/],
      ['redis+cluster://u:pw@10.0.0.1', /each node is host:port, got "10.0.0.1"/],
      ['redis+cluster://10.0.0.1:7000/1', /a Redis Cluster has database 0 only/],
    ];
    for (const [url, message] of bad) {
      const error = await connect(url).then(() => null, (e: unknown) => e);
      expect(isTasklineError(error, 'TL_INVALID_CONFIG'), `${url}: ${String(error)}`).toBe(true);
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).not.toContain('pw@');
    }
  });
});

/**
 * The whole backend conformance suite on a real Redis Cluster: three masters with one
 * replica each, started on free ports for this file. Each test's queues hash to slots spread over
 * the masters.
 */
import { afterAll, beforeAll } from 'vitest';
import { runConformanceSuite } from '../../src/backend/conformance/suite.js';
import { RedisCluster } from '../helpers/redis-cluster.js';
import { redisStore } from '../helpers/stores.js';

let cluster: RedisCluster;

beforeAll(async () => {
  cluster = await RedisCluster.start();
}, 60_000);

afterAll(async () => {
  await cluster?.destroy();
});

runConformanceSuite('redis-cluster', () => redisStore(cluster.url()));

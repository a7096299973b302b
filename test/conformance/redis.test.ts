import { runConformanceSuite } from '../../src/backend/conformance/suite.js';
import { redisStore } from '../helpers/stores.js';

runConformanceSuite('redis', () => redisStore());

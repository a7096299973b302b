import { runConformanceSuite } from '../../src/backend/conformance/suite.js';
import { sqliteStore } from '../helpers/sqlite-store.js';

runConformanceSuite('sqlite', () => sqliteStore());

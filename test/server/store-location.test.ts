import { describe, expect, it } from 'vitest';
import { storeLocation } from '../../src/backend/connect.js';

describe('storeLocation', () => {
  it('names a store without its credentials', () => {
    expect(storeLocation('redis://user:secret@cache.internal:6380/2')).toBe('cache.internal:6380/2');
    expect(storeLocation('redis://127.0.0.1')).toBe('127.0.0.1:6379');
    expect(storeLocation('rediss://:pw@[::1]:7000')).toBe('[::1]:7000');
    expect(storeLocation('sqlite:./data/taskline.db')).toBe('./data/taskline.db');
  });
});

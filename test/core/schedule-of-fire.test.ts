import { describe, expect, it } from 'vitest';
import { fireId, scheduleOfFire } from '../../src/core/schedule.js';

describe('scheduleOfFire', () => {
  it('finds the schedule of a fire id, a manual fire (trigger) included', () => {
    expect(scheduleOfFire(fireId('nightly', 3, 1_780_000_000_000))).toBe('nightly');
    expect(scheduleOfFire(`${fireId('nightly', 3, 1_780_000_000_000)}:manual`)).toBe('nightly');
    // A schedule id may hold colons (and even end like a fire id).
    expect(scheduleOfFire(fireId('team:a:reports', 1, 5))).toBe('team:a:reports');
    expect(scheduleOfFire(`${fireId('team:a:reports', 1, 5)}:manual`)).toBe('team:a:reports');
    expect(scheduleOfFire(fireId('a:1:2', 7, -5))).toBe('a:1:2');
  });

  it('is null for an id not of that form', () => {
    for (const id of ['task-1', 'schedule:nightly', 'schedule:nightly:3', 'schedule:nightly:3:x', 'schedule:nightly:3:100:other', 'schedule:nightly:3:100:manual:manual', 'x:schedule:a:1:2']) {
      expect(scheduleOfFire(id), id).toBeNull();
    }
  });
});

import { describe, expect, it } from 'vitest';
import { pollCadence } from './domain';

describe('pollCadence', () => {
  it('says the interval while up and the backed-off retry pause while down', () => {
    expect(pollCadence({ status: 'up', poll_interval_s: 1, retry_in_s: null })).toBe('every 1 s');
    // The backend doubles the pause while a target stays down; the UI must not claim "every 1 s".
    expect(pollCadence({ status: 'down', poll_interval_s: 1, retry_in_s: 8 })).toBe('retrying in 8 s (backs off while down)');
    expect(pollCadence({ status: 'down', poll_interval_s: 1, retry_in_s: null })).toBe('every 1 s');
    expect(pollCadence({ status: 'starting', poll_interval_s: 0, retry_in_s: null })).toBe('');
  });
});

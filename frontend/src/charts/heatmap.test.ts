import { describe, expect, it } from 'vitest';
import type { Series } from '../api/types';
import { bucketHeatmap, bucketIndex, heatColor } from './heatmap';

const q = (group: string, points: [number, number | null][]): Series => ({
  metric: 'tp_group_queue_length',
  labels: { group },
  points,
});
const st = (group: string, points: [number, number | null][]): Series => ({
  metric: 'tp_group_stalled',
  labels: { group },
  points,
});

describe('bucketIndex', () => {
  it('maps times into equal buckets and puts `to` in the last one', () => {
    expect(bucketIndex(0, 0, 100, 10)).toBe(0);
    expect(bucketIndex(9.99, 0, 100, 10)).toBe(0);
    expect(bucketIndex(10, 0, 100, 10)).toBe(1);
    expect(bucketIndex(100, 0, 100, 10)).toBe(9);
  });
  it('rejects times outside the window', () => {
    expect(bucketIndex(-1, 0, 100, 10)).toBe(-1);
    expect(bucketIndex(101, 0, 100, 10)).toBe(-1);
  });
});

describe('bucketHeatmap', () => {
  it('builds one row per group in numeric order with the max per bucket', () => {
    const h = bucketHeatmap(
      [
        q('10', [[5, 1]]),
        q('2', [
          [1, 3],
          [4, 7],
          [12, 2],
        ]),
      ],
      [],
      0,
      20,
      2,
    );
    expect(h.groups).toEqual(['2', '10']);
    expect(h.cells[0].map((c) => c.value)).toEqual([7, 2]);
    expect(h.cells[1].map((c) => c.value)).toEqual([1, null]);
    expect(h.max).toBe(7);
    expect(h.bucketS).toBe(10);
    expect(h.starts).toEqual([0, 10]);
  });

  it('marks buckets where the stalled metric was 1, including groups only seen in stalled data', () => {
    const h = bucketHeatmap(
      [
        q('0', [
          [1, 0],
          [11, 5],
        ]),
      ],
      [
        st('0', [
          [1, 0],
          [15, 1],
        ]),
        st('1', [[3, 1]]),
      ],
      0,
      20,
      2,
    );
    expect(h.groups).toEqual(['0', '1']);
    expect(h.cells[0].map((c) => c.stalled)).toEqual([false, true]);
    expect(h.cells[1][0]).toEqual({ value: null, stalled: true });
  });

  it('ignores nulls and points outside the window', () => {
    const h = bucketHeatmap(
      [
        q('0', [
          [5, null],
          [25, 60],
        ]),
      ],
      [],
      0,
      20,
      4,
    );
    expect(h.cells[0].every((c) => c.value === null)).toBe(true);
    expect(h.max).toBe(0);
  });

  it('lets a point before the window hold into it until the next point', () => {
    const h = bucketHeatmap(
      [
        q('0', [
          [-5, 50],
          [5, null],
          [15, null],
        ]),
      ],
      [],
      0,
      20,
      4,
    );
    expect(h.cells[0].map((c) => c.value)).toEqual([50, null, null, null]);
  });

  it('fills rollup minutes across their columns and keeps raw points in theirs', () => {
    const h = bucketHeatmap(
      [
        q('0', [
          [0, 3],
          [60, 4],
          [120, 5],
          [121, 6],
        ]),
      ],
      [
        st('0', [
          [0, 0],
          [60, 1],
          [120, 0],
        ]),
      ],
      0,
      120,
      12,
    );
    expect(h.cells[0].map((c) => c.value)).toEqual([3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 5]);
    // stalled from 60 s until the next sample at 120 s, i.e. through the last column
    expect(h.cells[0].map((c) => c.stalled).join('')).toBe(`${'false'.repeat(6)}${'true'.repeat(6)}`);
  });

  it('leaves a hole in the data empty instead of stretching the last value over it', () => {
    const h = bucketHeatmap(
      [
        q('0', [
          [0, 1],
          [1, 1],
          [2, 1],
          [50, 2],
          [51, 2],
        ]),
      ],
      [],
      0,
      60,
      6,
    );
    expect(h.cells[0].map((c) => c.value)).toEqual([1, null, null, null, null, 2]);
  });
});

describe('heatColor', () => {
  it('distinguishes no data, zero and high values', () => {
    expect(heatColor(null, 10)).toBe('transparent');
    const zero = heatColor(0, 10);
    const low = heatColor(1, 10);
    const high = heatColor(10, 10);
    expect(new Set([zero, low, high]).size).toBe(3);
    expect(high).toBe('var(--heat-4)');
    expect(heatColor(5, 10)).toBe('var(--heat-2)');
    expect(low).toBe('color-mix(in srgb, var(--heat-0) 40%, var(--heat-1))');
  });
});

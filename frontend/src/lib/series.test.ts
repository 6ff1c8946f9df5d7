import { describe, expect, it } from 'vitest';
import type { Series } from '../api/types';
import { appendSamples, isEmpty, isGapAfter, latestTs, seriesKey, seriesOf, toChartRows, trimSeries } from './series';

const wanted = new Set(['qps', 'tp_group_queue_length']);

describe('seriesKey', () => {
  it('is independent of label order', () => {
    expect(seriesKey('m', { b: '2', a: '1' })).toBe('m{a="1",b="2"}');
    expect(seriesKey('m', { a: '1', b: '2' })).toBe(seriesKey('m', { b: '2', a: '1' }));
    expect(seriesKey('qps', {})).toBe('qps');
  });
});

describe('appendSamples', () => {
  const base: Series[] = [
    {
      metric: 'qps',
      labels: {},
      points: [
        [100, 1],
        [101, 2],
      ],
    },
    {
      metric: 'tp_group_queue_length',
      labels: { group: '0' },
      points: [
        [100, 0],
        [101, 3],
      ],
    },
  ];

  it('appends to the matching series by metric and labels', () => {
    const out = appendSamples(
      base,
      [
        { metric: 'qps', labels: {}, value: 5 },
        { metric: 'tp_group_queue_length', labels: { group: '0' }, value: 7 },
      ],
      102,
      wanted,
    );
    expect(out[0].points).toEqual([
      [100, 1],
      [101, 2],
      [102, 5],
    ]);
    expect(out[1].points).toEqual([
      [100, 0],
      [101, 3],
      [102, 7],
    ]);
    // inputs are not mutated
    expect(base[0].points).toHaveLength(2);
  });

  it('ignores metrics that were not requested', () => {
    const out = appendSamples(base, [{ metric: 'threads_running', labels: {}, value: 9 }], 102, wanted);
    expect(out).toHaveLength(2);
    expect(out.some((s) => s.metric === 'threads_running')).toBe(false);
  });

  it('starts a new series for an unseen label set', () => {
    const out = appendSamples(base, [{ metric: 'tp_group_queue_length', labels: { group: '1' }, value: 4 }], 102, wanted);
    expect(out).toHaveLength(3);
    expect(out[2]).toEqual({ metric: 'tp_group_queue_length', labels: { group: '1' }, points: [[102, 4]] });
  });

  it('skips samples not newer than the last point (history already holds that poll)', () => {
    const out = appendSamples(base, [{ metric: 'qps', labels: {}, value: 99 }], 101, wanted);
    expect(out[0].points).toEqual([
      [100, 1],
      [101, 2],
    ]);
  });

  it('keeps null values as gaps', () => {
    const out = appendSamples(base, [{ metric: 'qps', labels: {}, value: null }], 102, wanted);
    expect(out[0].points[2]).toEqual([102, null]);
  });

  it('trims points older than the window measured from the new sample', () => {
    const out = appendSamples(base, [{ metric: 'qps', labels: {}, value: 5 }], 400.5, wanted, 300);
    // cutoff = 100.5: the point at 100 goes, the one at 101 stays
    expect(out[0].points).toEqual([
      [101, 2],
      [400.5, 5],
    ]);
    expect(out[1].points).toEqual([[101, 3]]);
  });

  it('drops series whose points all fall out of the window', () => {
    const out = appendSamples(base, [{ metric: 'qps', labels: {}, value: 5 }], 1000, wanted, 300);
    expect(out).toHaveLength(1);
    expect(out[0].metric).toBe('qps');
    expect(out[0].points).toEqual([[1000, 5]]);
  });
});

describe('trimSeries', () => {
  it('returns the same array when nothing is trimmed', () => {
    const s: Series[] = [{ metric: 'qps', labels: {}, points: [[10, 1]] }];
    expect(trimSeries(s, 5)).toBe(s);
  });
});

describe('seriesOf', () => {
  it('filters by metric and sorts groups numerically', () => {
    const s: Series[] = [
      { metric: 'tp_group_queue_length', labels: { group: '10' }, points: [] },
      { metric: 'qps', labels: {}, points: [] },
      { metric: 'tp_group_queue_length', labels: { group: '2' }, points: [] },
    ];
    expect(seriesOf(s, 'tp_group_queue_length').map((x) => x.labels.group)).toEqual(['2', '10']);
  });
});

describe('toChartRows', () => {
  it('pivots series into time-sorted rows, leaving missing values absent', () => {
    const s: Series[] = [
      {
        metric: 'qps',
        labels: {},
        points: [
          [2, 20],
          [1, 10],
        ],
      },
      { metric: 'tps', labels: {}, points: [[2, 5]] },
    ];
    const rows = toChartRows(s, (x) => x.metric);
    expect(rows).toEqual([
      { t: 1, qps: 10 },
      { t: 2, qps: 20, tps: 5 },
    ]);
  });
});

describe('isGapAfter', () => {
  it('flags an interval much longer than the one before it', () => {
    const t = [1, 2, 3, 60, 61];
    expect(isGapAfter(t, 1, 2.5)).toBe(false);
    expect(isGapAfter(t, 2, 2.5)).toBe(true);
    expect(isGapAfter(t, 3, 2.5)).toBe(false);
  });
  it('keeps rollup minutes followed by raw seconds connected', () => {
    const t = [0, 60, 120, 180, 181, 182];
    for (let i = 0; i < t.length - 1; i++) expect(isGapAfter(t, i, 2.5)).toBe(false);
    // ...but a missing stretch of rollups is a hole
    expect(isGapAfter([0, 60, 600, 660], 1, 2.5)).toBe(true);
  });
  it('uses the next interval for the first one and never flags below the floor', () => {
    expect(isGapAfter([0, 100, 101], 0, 2.5)).toBe(true);
    expect(isGapAfter([0, 2, 2.5], 0, 2.5)).toBe(false);
  });
});

describe('toChartRows gaps', () => {
  it('inserts a blank row where the data has a hole wider than maxGap', () => {
    const s: Series[] = [
      {
        metric: 'qps',
        labels: {},
        points: [
          [1, 1],
          [2, 2],
          [10, 3],
          [11, 4],
        ],
      },
    ];
    const rows = toChartRows(s, (x) => x.metric, 3);
    expect(rows.map((r) => r.t)).toEqual([1, 2, 6, 10, 11]);
    expect(rows[2].qps).toBeUndefined();
    // without maxGap the line would bridge the hole
    expect(toChartRows(s, (x) => x.metric)).toHaveLength(4);
  });
});

describe('latestTs / isEmpty', () => {
  it('finds the newest point and detects all-null data', () => {
    const s: Series[] = [
      {
        metric: 'a',
        labels: {},
        points: [
          [1, null],
          [5, null],
        ],
      },
      { metric: 'b', labels: {}, points: [[3, null]] },
    ];
    expect(latestTs(s)).toBe(5);
    expect(isEmpty(s)).toBe(true);
    expect(isEmpty([{ metric: 'a', labels: {}, points: [[1, 0]] }])).toBe(false);
    expect(latestTs([])).toBeNull();
  });
});

import { fireEvent, render, screen } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import type { Alert } from '../api/types';
import { makeAlert } from '../test/fixtures';
import { parseRange } from '../lib/range';
import { alertBands, alertChartsPath, spanRange, stallBands } from './bands';
import { Heatmap } from './Heatmap';
import { OverLayer, type Band } from './layers';

const alert = (over: Partial<Alert>): Alert =>
  makeAlert({
    id: 7,
    target: 'db 1',
    group: '1',
    status: 'resolved',
    summary: 'group 1 stalled',
    started_at: 1000,
    fired_at: 1000,
    resolved_at: 1060,
    ...over,
  });

describe('bands', () => {
  it('makes stall spans from the stalled polls, merged across groups', () => {
    const bands = stallBands(
      [
        {
          metric: 'tp_group_stalled',
          labels: { group: '0' },
          points: [
            [100, 0],
            [101, 1],
            [102, 1],
            [103, 0],
            [110, 1],
          ],
        },
        {
          metric: 'tp_group_stalled',
          labels: { group: '1' },
          points: [
            [102, 1],
            [103, 1],
            [104, 0],
          ],
        },
      ],
      1,
    );
    expect(bands.map((b) => [b.from, b.to, b.label])).toEqual([
      [101, 104, 'groups 0, 1 stalled'],
      [110, 111, 'group 0 stalled'],
    ]);
  });

  it("draws an alert from firing to resolved (or on), and marks the URL's", () => {
    const [done, open] = alertBands([alert({}), alert({ id: 8, resolved_at: null, severity: 'warning' })], 8);
    expect([done.from, done.to, done.highlight, done.severity]).toEqual([1000, 1060, false, 'critical']);
    expect([open.to, open.highlight, open.alertId]).toEqual([null, true, 8]);
  });

  it('opens an alert on its target page with time around it', () => {
    expect(spanRange(1000, 1060, 5000)).toEqual({ kind: 'custom', from: 970, to: 1090 });
    expect(spanRange(1000, null, 1400)).toEqual({ kind: 'custom', from: 900, to: 1400 });
    expect(alertChartsPath(alert({}), 5000)).toBe('/targets/db%201?alert=7&from=970&to=1090');
  });

  it('opens an alert pushed since the clock last ticked with its start in the range, on the charts and in the query', () => {
    // The alert list's clock read 999.6; the alert fired at 1000.4 and is still firing.
    const firing = alert({ fired_at: 1000.4, started_at: 1000.4, resolved_at: null });
    const href = alertChartsPath(firing, 999.6);
    expect(href).toBe('/targets/db%201?alert=7&from=970&to=1001');
    const range = parseRange(href.slice(href.indexOf('?')));
    expect(range).toEqual({ kind: 'custom', from: 970, to: 1001 });
    if (range.kind !== 'custom') throw new Error('not a fixed range');
    // Its band is drawn; the query for the bands asks up to the same to (the backend keeps fired_at <= to).
    render(
      <OverLayer
        plot={{ left: 0, right: 300, top: 0, bottom: 100 }}
        from={range.from}
        to={range.to}
        bands={alertBands([firing], 7)}
        testId="c"
      />,
    );
    const handle = screen.getByTestId('c-band');
    expect(handle.getAttribute('data-alert')).toBe('7');
    expect(handle.getAttribute('data-highlight')).toBe('true');
  });
});

const handleBox = (h: HTMLElement) => ({
  top: parseFloat(h.style.top),
  left: parseFloat(h.style.left),
  width: parseFloat(h.style.width),
});

describe('band handles', () => {
  it('stacks the handles of overlapping bands so that each can be clicked', () => {
    const bands: Band[] = [
      { id: 'a1', kind: 'alert', from: 1100, to: 1500, label: 'queue wait', severity: 'critical' },
      { id: 's1', kind: 'stall', from: 1200, to: 1300, label: 'group 0 stalled' },
      { id: 'a2', kind: 'alert', from: 1400, to: null, label: 'group 0 stalled', severity: 'warning' },
      { id: 'a3', kind: 'alert', from: 1600, to: 1700, label: 'queue wait', severity: 'critical' },
    ];
    const onBand = vi.fn<(b: Band) => void>();
    render(
      <OverLayer
        plot={{ left: 0, right: 1000, top: 0, bottom: 200 }}
        from={1000}
        to={2000}
        bands={bands}
        onBand={onBand}
        testId="c"
      />,
    );
    const handles = screen.getAllByTestId('c-band');
    // Any two handles that overlap in x are apart in y by at least a handle's height.
    const clashes = handles.flatMap((a, i) =>
      handles.slice(i + 1).filter((b) => {
        const [p, q] = [handleBox(a), handleBox(b)];
        return p.left < q.left + q.width && q.left < p.left + p.width && Math.abs(p.top - q.top) < 6;
      }),
    );
    expect(clashes).toEqual([]);
    // The stall keeps the bottom lane; a3 starts after a1 ended and reuses its lane.
    expect(handles.map((h) => h.dataset.lane)).toEqual(['1', '0', '2', '1']);
    for (const [i, h] of handles.entries()) {
      fireEvent.click(h);
      expect(onBand).toHaveBeenLastCalledWith(bands[i]);
    }
  });
});

describe('drag to zoom', () => {
  it('gives the span dragged across the plot, and takes a click for no zoom', () => {
    const onZoom = vi.fn<(from: number, to: number) => void>();
    render(
      <Heatmap
        values={[{ metric: 'tp_group_queue_length', labels: { group: '0' }, points: [[1000, 1]] }]}
        stalled={[]}
        from={1000}
        to={2000}
        valueLabel="queued"
        onZoom={onZoom}
      />,
    );
    // jsdom lays nothing out: the heatmap is 800 px wide, its plot from 56 to 792 px.
    const box = screen.getByTestId('group-heatmap').querySelector('.chart-box')!;
    fireEvent.mouseDown(box, { button: 0, clientX: 56 + 184 });
    fireEvent.mouseMove(box, { clientX: 56 + 368 });
    expect(screen.getByTestId('chart-selection')).toBeTruthy();
    fireEvent.mouseUp(box, { clientX: 56 + 368 });
    expect(onZoom).toHaveBeenCalledTimes(1);
    const [from, to] = onZoom.mock.calls[0];
    expect(from).toBeCloseTo(1250);
    expect(to).toBeCloseTo(1500);
    fireEvent.mouseDown(box, { button: 0, clientX: 300 });
    fireEvent.mouseUp(box, { clientX: 302 });
    expect(onZoom).toHaveBeenCalledTimes(1);
  });
});

// Time range picker: earlier / Live / 5m / 1h / 24h / Custom / later / zoom out; the value lives in the URL
// (each choice is a history entry, so Back undoes it). Dragging across a chart zooms (charts/layers.tsx).
import { useState } from 'react';
import { fromDatetimeLocal, toDatetimeLocal, tzName } from '../lib/format';
import { canShiftLater, resolveRange, shiftRange, zoomOut, type RelativeKey, type TimeRange } from '../lib/range';

const RELATIVE: RelativeKey[] = ['5m', '1h', '24h'];

const btn = (active: boolean) => `seg-btn ${active ? 'seg-active' : ''}`;
const now = () => Date.now() / 1000;

export function RangePicker({
  range,
  onChange,
  onRefresh,
}: {
  range: TimeRange;
  onChange: (r: TimeRange) => void;
  onRefresh?: () => void;
}) {
  const [customOpen, setCustomOpen] = useState(range.kind === 'custom');
  const [initial] = useState(() => resolveRange(range, now()));
  const [fromText, setFromText] = useState(() => toDatetimeLocal(initial.from));
  const [toText, setToText] = useState(() => toDatetimeLocal(initial.to));
  const from = fromDatetimeLocal(fromText);
  const to = fromDatetimeLocal(toText);
  const invalid = from === null || to === null || from >= to;
  const [laterOk] = useState(() => canShiftLater(range, now()));

  return (
    <div className="range-picker" data-testid="range-picker">
      <div className="seg" role="group" aria-label="Move the range">
        <button
          type="button"
          className="seg-btn"
          data-testid="range-earlier"
          aria-label="Earlier: move the range back by half its width"
          title="Earlier: move the range back by half its width"
          onClick={() => onChange(shiftRange(range, -1, now()))}
        >
          ◀
        </button>
        <button
          type="button"
          className="seg-btn"
          data-testid="range-later"
          aria-label="Later: move the range forward by half its width"
          title="Later: move the range forward by half its width"
          disabled={!laterOk}
          onClick={() => onChange(shiftRange(range, 1, now()))}
        >
          ▶
        </button>
        <button
          type="button"
          className="seg-btn"
          data-testid="range-zoom-out"
          aria-label="Zoom out: twice as wide"
          title="Zoom out: twice as wide (drag across a chart to zoom in)"
          onClick={() => onChange(zoomOut(range, now()))}
        >
          −
        </button>
      </div>
      <div className="seg" role="group" aria-label="Time range">
        <button
          type="button"
          className={btn(range.kind === 'live')}
          aria-pressed={range.kind === 'live'}
          data-testid="range-live"
          onClick={() => {
            setCustomOpen(false);
            onChange({ kind: 'live' });
          }}
        >
          Live
        </button>
        {RELATIVE.map((k) => {
          const active = range.kind === 'relative' && range.key === k;
          return (
            <button
              key={k}
              type="button"
              className={btn(active)}
              aria-pressed={active}
              data-testid={`range-${k}`}
              onClick={() => {
                setCustomOpen(false);
                onChange({ kind: 'relative', key: k });
              }}
            >
              {k}
            </button>
          );
        })}
        <button
          type="button"
          className={btn(range.kind === 'custom' || customOpen)}
          aria-pressed={range.kind === 'custom'}
          aria-expanded={customOpen}
          data-testid="range-custom"
          onClick={() => {
            if (!customOpen) {
              const r = resolveRange(range, now());
              setFromText(toDatetimeLocal(r.from));
              setToText(toDatetimeLocal(r.to));
            }
            setCustomOpen(!customOpen);
          }}
        >
          Custom
        </button>
      </div>
      {range.kind !== 'live' && onRefresh ? (
        <button type="button" className="btn" onClick={onRefresh} data-testid="range-refresh" title="Fetch the range again">
          ↻ Refresh
        </button>
      ) : null}
      {customOpen ? (
        <form
          className="range-custom"
          onSubmit={(e) => {
            e.preventDefault();
            if (!invalid) onChange({ kind: 'custom', from: from!, to: to! });
          }}
        >
          <label>
            from{' '}
            <input
              type="datetime-local"
              value={fromText}
              onChange={(e) => setFromText(e.target.value)}
              data-testid="range-from"
            />
          </label>
          <label>
            to <input type="datetime-local" value={toText} onChange={(e) => setToText(e.target.value)} data-testid="range-to" />
          </label>
          <span className="muted small">{tzName()}</span>
          <button type="submit" className="btn" disabled={invalid} data-testid="range-apply">
            Apply
          </button>
          {invalid ? <span className="text-warn small">“from” must be before “to”</span> : null}
        </form>
      ) : null}
    </div>
  );
}

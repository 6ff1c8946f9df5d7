// Time range picker: Live / 5m / 1h / 24h / Custom (two datetime-local inputs); the value lives in the URL.
import { useState } from 'react';
import { fromDatetimeLocal, toDatetimeLocal, type RelativeKey, type TimeRange, resolveRange } from '../lib/range';

const RELATIVE: RelativeKey[] = ['5m', '1h', '24h'];

const btn = (active: boolean) => `seg-btn ${active ? 'seg-active' : ''}`;

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
  const [initial] = useState(() => resolveRange(range, Date.now() / 1000));
  const [fromText, setFromText] = useState(() => toDatetimeLocal(initial.from));
  const [toText, setToText] = useState(() => toDatetimeLocal(initial.to));
  const from = fromDatetimeLocal(fromText);
  const to = fromDatetimeLocal(toText);
  const invalid = from === null || to === null || from >= to;

  return (
    <div className="range-picker" data-testid="range-picker">
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
              const r = resolveRange(range, Date.now() / 1000);
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
          <button type="submit" className="btn" disabled={invalid} data-testid="range-apply">
            Apply
          </button>
          {invalid ? <span className="text-warn small">“from” must be before “to”</span> : null}
        </form>
      ) : null}
    </div>
  );
}

// The "?" beside a chart title or a column header: what the figure means and its unit. Metrics are
// explained from their one home, the backend's catalog (api/metrics.gen.ts); other figures say it here.
import { useEffect, useId, useRef, useState, type ReactNode } from 'react';
import { METRICS, type MetricName } from '../api/metrics.gen';

/** A unit of the catalog in words. */
export function unitWords(unit: string): string {
  switch (unit) {
    case '':
      return 'a count';
    case 'per_s':
      return 'per second';
    case 'ms':
      return 'milliseconds';
    case 's':
      return 'seconds';
    case 'us':
      return 'microseconds (shown in ms)';
    case 'ratio':
      return 'a share of 0 to 1, shown in %';
    default:
      return unit;
  }
}

export function isMetric(name: string): name is MetricName {
  return Object.hasOwn(METRICS, name);
}

/** A "?" that opens an explanation in place (click, Enter or Space; Escape or a click elsewhere closes it). */
export function Help({
  label,
  children,
  testId,
  trigger,
}: {
  label: string;
  children: ReactNode;
  testId?: string;
  /** Text that opens it instead of a "?" (a column's own name, underlined): compact in a table head. */
  trigger?: string;
}) {
  const [open, setOpen] = useState(false);
  const id = useId();
  const box = useRef<HTMLSpanElement | null>(null);
  useEffect(() => {
    if (!open) return;
    const close = (e: Event) => {
      if (e instanceof KeyboardEvent ? e.key === 'Escape' : !box.current?.contains(e.target as Node)) setOpen(false);
    };
    document.addEventListener('keydown', close);
    document.addEventListener('mousedown', close);
    return () => {
      document.removeEventListener('keydown', close);
      document.removeEventListener('mousedown', close);
    };
  }, [open]);
  return (
    <span className="help" ref={box}>
      <button
        type="button"
        className={trigger ? 'help-text' : 'help-btn'}
        aria-label={trigger ? `${trigger}: what it means` : `About ${label}`}
        aria-expanded={open}
        aria-controls={id}
        data-testid={testId}
        onClick={(e) => {
          // Inside a sortable header the click is the help's, not the sort's.
          e.stopPropagation();
          setOpen(!open);
        }}
      >
        {trigger ?? '?'}
      </button>
      {open ? (
        <span id={id} className="help-pop" role="note" data-testid={testId ? `${testId}-text` : undefined}>
          {children}
        </span>
      ) : null}
    </span>
  );
}

/** What the catalog says about each of `metrics`: its help, its unit, its stored name. */
export function MetricHelp({
  metrics,
  label,
  testId,
  note,
  trigger,
}: {
  metrics: readonly string[];
  label: string;
  testId?: string;
  note?: ReactNode;
  /** As Help's: the column's name opens it. */
  trigger?: string;
}) {
  const known = [...new Set(metrics)].filter(isMetric);
  if (!known.length && !note) return trigger ?? null;
  return (
    <Help label={label} testId={testId} trigger={trigger}>
      {known.map((m) => (
        <span key={m} className="help-metric">
          <strong>{METRICS[m].help}</strong>
          <span className="muted">
            {' '}
            — {unitWords(METRICS[m].unit)} · <code>{m}</code>
          </span>
        </span>
      ))}
      {note ? <span className="help-note">{note}</span> : null}
    </Help>
  );
}

// The top bar's view controls, on every page: the time zone times are shown in, the theme, and how
// often polled data refreshes (or a pause that holds the page still).
import { useQueryClient } from '@tanstack/react-query';
import { REFRESH_CHOICES, setPrefs, usePrefs, type RefreshChoice, type ThemeChoice, type TimeZoneChoice } from '../lib/prefs';

const ZONES: [TimeZoneChoice, string, string][] = [
  ['local', 'Local', "Times in this browser's time zone"],
  ['utc', 'UTC', 'Times in UTC'],
];

const THEMES: [ThemeChoice, string][] = [
  ['system', 'Theme: system'],
  ['light', 'Theme: light'],
  ['dark', 'Theme: dark'],
];

const refreshLabel = (r: RefreshChoice) => (r === 'auto' ? 'Refresh: auto' : `Refresh: ${r < 60 ? `${r} s` : `${r / 60} min`}`);

export function ViewControls() {
  const prefs = usePrefs();
  const qc = useQueryClient();
  return (
    <div className="view-controls" data-testid="view-controls">
      <div className="seg" role="group" aria-label="Time zone">
        {ZONES.map(([tz, label, title]) => (
          <button
            key={tz}
            type="button"
            className={`seg-btn ${prefs.tz === tz ? 'seg-active' : ''}`}
            aria-pressed={prefs.tz === tz}
            title={title}
            data-testid={`tz-${tz}`}
            onClick={() => setPrefs({ tz })}
          >
            {label}
          </button>
        ))}
      </div>
      <select
        aria-label="Theme"
        value={prefs.theme}
        onChange={(e) => setPrefs({ theme: e.target.value as ThemeChoice })}
        data-testid="theme-select"
      >
        {THEMES.map(([value, label]) => (
          <option key={value} value={value}>
            {label}
          </option>
        ))}
      </select>
      <select
        aria-label="Refresh interval"
        title="How often polled data is fetched again; auto: each view's own pace (live pages follow the stream)"
        value={String(prefs.refresh)}
        onChange={(e) => setPrefs({ refresh: e.target.value === 'auto' ? 'auto' : (Number(e.target.value) as RefreshChoice) })}
        data-testid="refresh-select"
      >
        {REFRESH_CHOICES.map((r) => (
          <option key={r} value={String(r)}>
            {refreshLabel(r)}
          </option>
        ))}
      </select>
      <button
        type="button"
        className={`btn btn-small ${prefs.paused ? 'btn-paused' : ''}`}
        aria-pressed={prefs.paused}
        data-testid="refresh-pause"
        title={
          prefs.paused ? 'Resume: fetch and follow the live stream again' : 'Pause: hold the page still (nothing is fetched)'
        }
        onClick={() => {
          setPrefs({ paused: !prefs.paused });
          // Resumed: what changed meanwhile is fetched now, not at the next interval.
          if (prefs.paused) void qc.invalidateQueries();
        }}
      >
        {prefs.paused ? 'Resume' : 'Pause'}
      </button>
      <button
        type="button"
        className="btn btn-small"
        title="Fetch everything on this page again now"
        aria-label="Refresh now"
        data-testid="refresh-now"
        onClick={() => void qc.invalidateQueries()}
      >
        ↻
      </button>
    </div>
  );
}

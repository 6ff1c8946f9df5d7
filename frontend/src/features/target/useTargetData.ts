// Target page data: target info, current state and metric history, kept fresh by one SSE stream (5 s refetch fallback).
import { useCallback, useEffect, useRef, useState } from 'react';
import { fetchMetrics, fetchTarget, fetchTargetState } from '../../api/client';
import { useLiveChannel, type LiveStatus } from '../../api/live';
import type { PollEvent, Series, Target, TargetState } from '../../api/types';
import { useInterval } from '../../lib/hooks';
import { LIVE_WINDOW_S, resolveRange, serializeRange, type TimeRange } from '../../lib/range';
import { appendSamples } from '../../lib/series';
import { ALL_METRICS_SET, AVG_AGG_METRICS, HISTORY_POINTS, livePoints, MAX_AGG_METRICS } from './metrics';

export const FALLBACK_REFRESH_MS = 5000;
/** Cap on poll events buffered while the first history fetch is in flight. */
const MAX_PENDING = 600;

export interface History {
  /** The serialized range this history answers; a history for another range is never shown. */
  key: string;
  series: Series[];
  from: number;
  to: number;
  step_s: number;
  resolution: string;
}

export interface TargetData {
  target: Target | null;
  targetError: Error | null;
  state: TargetState | null;
  stateError: Error | null;
  history: History | null;
  historyLoading: boolean;
  historyError: Error | null;
  liveStatus: LiveStatus;
}

const asError = (e: unknown) => (e instanceof Error ? e : new Error(String(e)));
const isAbort = (e: unknown) => e instanceof DOMException && e.name === 'AbortError';

/** Fold buffered/streamed poll events into live-window history. Exported for tests. */
export function applyPolls(h: History, events: readonly PollEvent[]): History {
  let { series, to } = h;
  for (const ev of events) {
    series = appendSamples(series, ev.samples, ev.ts, ALL_METRICS_SET, LIVE_WINDOW_S);
    to = Math.max(to, ev.ts);
  }
  return { ...h, series, to, from: to - LIVE_WINDOW_S };
}

/**
 * `refreshKey` forces a history refetch (the Refresh button for relative ranges). The caller remounts
 * this hook per target name (React key), so nothing here needs resetting when the name changes.
 */
export function useTargetData(name: string, range: TimeRange, refreshKey = 0): TargetData {
  const [target, setTarget] = useState<Target | null>(null);
  const [targetError, setTargetError] = useState<Error | null>(null);
  const [state, setState] = useState<TargetState | null>(null);
  const [stateError, setStateError] = useState<Error | null>(null);
  const [history, setHistory] = useState<History | null>(null);
  const [historyLoading, setHistoryLoading] = useState(true);
  const [historyError, setHistoryError] = useState<Error | null>(null);
  const [fallbackTick, setFallbackTick] = useState(0);

  const rangeKey = serializeRange(range);
  const liveRef = useRef(range.kind === 'live');
  const loaded = useRef(false);
  const pending = useRef<PollEvent[]>([]);

  const loadCurrent = useCallback(
    (signal?: AbortSignal) => {
      fetchTarget(name, signal)
        .then((t) => {
          setTarget(t);
          setTargetError(null);
        })
        .catch((e: unknown) => !isAbort(e) && setTargetError(asError(e)));
      fetchTargetState(name, signal)
        .then((s) => {
          setState(s);
          setStateError(null);
        })
        .catch((e: unknown) => !isAbort(e) && setStateError(asError(e)));
    },
    [name],
  );

  useEffect(() => {
    const ac = new AbortController();
    loadCurrent(ac.signal);
    return () => ac.abort();
  }, [loadCurrent]);

  // History: refetch when the range (or refresh key) changes. Live mode buffers SSE polls until it lands.
  useEffect(() => {
    const ac = new AbortController();
    const isLive = range.kind === 'live';
    liveRef.current = isLive;
    loaded.current = false;
    pending.current = [];
    const now = Date.now() / 1000;
    const { from, to } = resolveRange(range, now);
    const points = isLive ? livePoints(window.innerWidth) : HISTORY_POINTS;
    setHistoryLoading(true);
    Promise.all([
      fetchMetrics(name, { metrics: MAX_AGG_METRICS, from, to, points, agg: 'max' }, ac.signal),
      fetchMetrics(name, { metrics: AVG_AGG_METRICS, from, to, points }, ac.signal),
    ])
      .then(([maxRes, res]) => {
        let h: History = {
          key: rangeKey,
          series: [...maxRes.series, ...res.series],
          from: res.from,
          to: res.to,
          step_s: res.step_s,
          resolution: res.resolution,
        };
        if (isLive) h = applyPolls(h, pending.current);
        setHistory(h);
        setHistoryError(null);
      })
      .catch((e: unknown) => {
        if (isAbort(e)) return;
        setHistoryError(asError(e));
        // Live charts can still fill from the stream even when the history query failed.
        const empty: History = { key: rangeKey, series: [], from, to, step_s: 1, resolution: 'raw' };
        setHistory((prev) => (isLive ? applyPolls(prev?.key === rangeKey ? prev : empty, pending.current) : prev));
      })
      .finally(() => {
        if (ac.signal.aborted) return;
        loaded.current = true;
        pending.current = [];
        setHistoryLoading(false);
      });
    return () => ac.abort();
    // `range` is represented by rangeKey; fallbackTick re-pulls the live window while SSE is down.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [name, rangeKey, refreshKey, fallbackTick]);

  const onPoll = useCallback((ev: PollEvent) => {
    if (ev.target_info) {
      setTarget(ev.target_info);
      setTargetError(null);
    }
    if (ev.state) {
      setState(ev.state);
      setStateError(null);
    }
    if (!liveRef.current) return;
    if (!loaded.current) {
      pending.current.push(ev);
      if (pending.current.length > MAX_PENDING) pending.current.shift();
      return;
    }
    setHistory((h) => (h ? applyPolls(h, [ev]) : h));
  }, []);

  const liveStatus = useLiveChannel(name, onPoll);
  const sseDown = liveStatus === 'error' || liveStatus === 'unsupported';
  useInterval(
    () => {
      loadCurrent();
      if (liveRef.current) setFallbackTick((n) => n + 1);
    },
    FALLBACK_REFRESH_MS,
    sseDown,
  );

  // While a new range loads, show "loading" rather than the previous range's charts under the new label.
  const current = history?.key === rangeKey ? history : null;
  return { target, targetError, state, stateError, history: current, historyLoading, historyError, liveStatus };
}

// Recommendations, apply/revert and the audit log (docs/API.md "Recommendations and changes").
import { mutate } from './auth';
import { getJson } from './client';

export type Severity = 'info' | 'warning' | 'critical';

export interface Evidence {
  label: string;
  value: string;
  metric: string | null;
}

export interface Recommendation {
  id: string;
  rule: string;
  target: string;
  variable: string;
  current: string | null;
  proposed: string;
  unit: string | null;
  title: string;
  why: string;
  evidence: Evidence[];
  window: { from: number; to: number; seconds: number; polls: number };
  severity: Severity;
  apply: 'live' | 'restart';
  applicable: boolean;
  not_applicable_reason: string | null;
  read_more: string;
  chart_metrics: string[];
  chart_url: string;
  config_snippet: string;
  persist_sql: string | null;
  first_seen: number;
  last_seen: number;
}

export interface VanishedRecommendation {
  id: string;
  rule: string;
  variable: string;
  title: string;
  proposed: string;
  first_seen: number;
  gone_at: number;
  why_gone: string;
}

export interface RuleStatus {
  rule: string;
  recommends: boolean;
  note: string;
}

export interface Recommendations {
  target: string;
  evaluated_at: number | null;
  active: Recommendation[];
  vanished: VanishedRecommendation[];
  rules: RuleStatus[];
  note: string | null;
}

export interface VariableMeta {
  name: string;
  type: string;
  min: string | null;
  max: string | null;
  enum_values: string[];
  read_only: boolean;
}

export interface ApplyPreview {
  target: string;
  variable: string;
  current: string | null;
  proposed: string;
  meta: VariableMeta;
  what_happens: string;
  config_snippet: string;
  persist_sql: string | null;
  port_kind: string;
}

export type GuardStatus = 'watching' | 'kept' | 'reverted' | 'superseded' | 'interrupted';

// unverified: the SET was accepted (or its answer lost) but the value could not be read back;
// the server probably holds new_value and the change can be reverted.
export type AuditResult = 'applied' | 'unverified' | 'failed';

/** Results after which the server may hold new_value: revertible, drawn on the charts. */
export function tookEffect(result: AuditResult): boolean {
  return result !== 'failed';
}

export interface AuditEntry {
  id: number;
  ts: number;
  target: string;
  action: 'apply' | 'revert' | 'auto_revert';
  variable: string;
  old_value: string | null;
  new_value: string;
  result: AuditResult;
  detail: string | null;
  user: string;
  recommendation_id: string | null;
  reverts_id: number | null;
  reverted_by_id: number | null;
  port_kind: string | null;
  guarded: boolean;
  guard_status: GuardStatus | null;
  guard_until: number | null;
  guard_note: string | null;
  config_snippet: string | null;
}

export interface MetricChange {
  metric: string;
  label: string;
  before: number | null;
  after: number | null;
  change: number | null;
}

export interface Comparison {
  change_id: number;
  ts: number;
  window_s: number;
  complete: boolean;
  metrics: MetricChange[];
}

const enc = encodeURIComponent;

export function fetchRecommendations(target: string, signal?: AbortSignal): Promise<Recommendations> {
  return getJson<Recommendations>(`/api/targets/${enc(target)}/recommendations`, signal);
}

export function fetchAudit(target: string, signal?: AbortSignal): Promise<AuditEntry[]> {
  return getJson<AuditEntry[]>(`/api/targets/${enc(target)}/audit`, signal);
}

export function fetchPreview(target: string, variable: string, value: string): Promise<ApplyPreview> {
  const q = new URLSearchParams({ variable, value });
  return getJson<ApplyPreview>(`/api/targets/${enc(target)}/apply/preview?${q.toString()}`);
}

export function fetchComparison(target: string, id: number): Promise<Comparison> {
  return getJson<Comparison>(`/api/targets/${enc(target)}/audit/${id}/compare`);
}

export function applyChange(
  target: string,
  body: { variable: string; value: string; recommendation_id?: string | null; guard?: boolean },
): Promise<AuditEntry> {
  return mutate<AuditEntry>(`/api/targets/${enc(target)}/apply`, 'POST', body);
}

export function revertChange(target: string, id: number): Promise<AuditEntry> {
  return mutate<AuditEntry>(`/api/targets/${enc(target)}/audit/${id}/revert`, 'POST');
}

// Recommendations, apply/revert and the audit log; shapes from schema.gen.ts.
import { mutate } from './auth';
import { getJson } from './client';
import type { components } from './schema.gen';

type Schemas = components['schemas'];

export type Recommendation = Schemas['Recommendation'];
export type Severity = Recommendation['severity'];
export type Evidence = Schemas['Evidence'];
export type VanishedRecommendation = Schemas['VanishedRecommendation'];
export type RuleStatus = Schemas['RuleStatus'];
export type Recommendations = Schemas['RecommendationsOut'];
export type VariableMeta = Schemas['VariableMeta'];
export type ApplyPreview = Schemas['ApplyPreview'];
export type ApplyRequest = Schemas['ApplyIn'];
export type AuditEntry = Schemas['AuditEntry'];
export type GuardStatus = NonNullable<AuditEntry['guard_status']>;

// unverified: the SET was accepted (or its answer lost) but the value could not be read back;
// the server probably holds new_value and the change can be reverted.
export type AuditResult = AuditEntry['result'];

/** Results after which the server may hold new_value: revertible, drawn on the charts. */
export function tookEffect(result: AuditResult): boolean {
  return result !== 'failed';
}

export type MetricChange = Schemas['MetricChange'];
export type Comparison = Schemas['Comparison'];

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

export function applyChange(target: string, body: ApplyRequest): Promise<AuditEntry> {
  return mutate<AuditEntry>(`/api/targets/${enc(target)}/apply`, 'POST', body);
}

export function revertChange(target: string, id: number): Promise<AuditEntry> {
  return mutate<AuditEntry>(`/api/targets/${enc(target)}/audit/${id}/revert`, 'POST');
}

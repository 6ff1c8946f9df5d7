// Recommendations, apply/revert and the audit log; shapes from schema.gen.ts.
// Reading them is a query (queries.ts); these are the one-off reads and the changes.
import { get, post } from './http';
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

export type LoadChange = Schemas['LoadChange'];
export type MetricEffect = Schemas['MetricEffect'];
export type Verdict = Schemas['Comparison']['verdict'];
export type Comparison = Schemas['Comparison'];

const path = (name: string) => ({ path: { name } });

export function fetchPreview(target: string, variable: string, value: string, signal?: AbortSignal): Promise<ApplyPreview> {
  return get('/api/targets/{name}/apply/preview', { params: { ...path(target), query: { variable, value } }, signal });
}

export function fetchComparison(target: string, id: number, signal?: AbortSignal): Promise<Comparison> {
  return get('/api/targets/{name}/audit/{change_id}/compare', { params: { path: { name: target, change_id: id } }, signal });
}

export function applyChange(target: string, body: ApplyRequest): Promise<AuditEntry> {
  return post('/api/targets/{name}/apply', { params: path(target), body });
}

export function revertChange(target: string, id: number): Promise<AuditEntry> {
  return post('/api/targets/{name}/audit/{change_id}/revert', { params: { path: { name: target, change_id: id } } });
}

import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { resetAuthForTests } from '../../api/auth';
import type { AuditEntry } from '../../api/changes';
import { AUDIT_CSV, AuditPanel } from './AuditPanel';
import { RecommendationsPanel } from './RecommendationsPanel';
import { auditMarkers } from './useChanges';
import { renderWithClient } from '../../test/render';
import { asRequest } from '../../test/fakes';
import { RECOMMENDATIONS as RECS, RECOMMENDED_AT as NOW } from '../../test/fixtures';
import { toCsv } from '../../lib/csv';

const ENTRY: AuditEntry = {
  id: 7,
  ts: NOW - 30,
  target: 'db',
  action: 'apply',
  variable: 'thread_pool_stall_limit',
  old_value: '500',
  new_value: '30',
  result: 'applied',
  detail: null,
  user: 'op',
  recommendation_id: 'db:thread_pool_stall_limit',
  manual: false,
  reverts_id: null,
  reverted_by_id: null,
  port_kind: 'extra_port',
  guarded: false,
  guard_status: null,
  guard_until: null,
  guard_note: null,
  config_snippet: null,
};

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
}

describe('recommendations and audit', () => {
  beforeEach(() => resetAuthForTests({ status: 'user', user: { name: 'op', role: 'operator' }, note: null }));
  afterEach(() => {
    cleanup();
    vi.unstubAllGlobals();
  });

  it('shows evidence, the window link and the vanished note; operators get an apply button', () => {
    renderWithClient(<RecommendationsPanel target="db" data={RECS} error={null} now={NOW} onChanged={() => {}} />);
    const card = screen.getByTestId('rec-thread_pool_stall_limit');
    expect(card.textContent).toContain('thread_pool_stall_limit: 500 ms → 30 ms');
    expect(screen.getByTestId('rec-evidence').textContent).toContain('longest queue wait480 ms');
    expect(screen.getByTestId('rec-window').getAttribute('href')).toBe(RECS.active[0].chart_url);
    expect(screen.getByTestId('vanished-thread_pool_exact_stats').textContent).toContain('changed from OFF to ON');
    expect(screen.getByTestId('rec-apply-thread_pool_stall_limit')).toBeTruthy();
  });

  it('viewers see no apply button', () => {
    resetAuthForTests({ status: 'user', user: { name: 'vi', role: 'viewer' }, note: null });
    renderWithClient(<RecommendationsPanel target="db" data={RECS} error={null} now={NOW} onChanged={() => {}} />);
    expect(screen.queryByTestId('rec-apply-thread_pool_stall_limit')).toBeNull();
    expect(screen.getByTestId('rec-thread_pool_stall_limit').textContent).toContain('log in as an operator');
  });

  it('apply previews, then confirms with the recommendation id; guarded unless unticked', async () => {
    const calls: Request[] = [];
    vi.stubGlobal(
      'fetch',
      vi.fn<(...args: [RequestInfo | URL, RequestInit?]) => Promise<Response>>(async (...args) => {
        const request = asRequest(args);
        calls.push(request);
        if (request.url.includes('/apply/preview'))
          return json(200, {
            target: 'db',
            variable: 'thread_pool_stall_limit',
            current: '500',
            proposed: '30',
            meta: {
              name: 'thread_pool_stall_limit',
              type: 'INT UNSIGNED',
              min: '1',
              max: '4294967295',
              enum_values: [],
              read_only: false,
            },
            what_happens: 'SET GLOBAL thread_pool_stall_limit = 30 ... until the server restarts',
            config_snippet: '[mariadb]\nthread_pool_stall_limit = 30\n',
            persist_sql: null,
            port_kind: 'extra_port',
            guard_default: true,
            guard_window_s: 60,
          });
        return json(200, ENTRY);
      }),
    );
    const onChanged = vi.fn<(e: AuditEntry) => void>();
    renderWithClient(<RecommendationsPanel target="db" data={RECS} error={null} now={NOW} onChanged={onChanged} />);
    fireEvent.click(screen.getByTestId('rec-apply-thread_pool_stall_limit'));
    expect((await screen.findByTestId('apply-proposed')).textContent).toBe('30 ms');
    expect(screen.getByTestId('apply-current').textContent).toBe('500 ms');
    const guard = screen.getByTestId<HTMLInputElement>('apply-guard');
    expect(guard.checked).toBe(true); // on by default (guard_by_default)
    expect(guard.parentElement!.textContent).toContain('after 60 s');
    fireEvent.click(guard);
    expect(guard.checked).toBe(false);
    fireEvent.click(screen.getByTestId('apply-confirm'));
    await waitFor(() => expect(onChanged).toHaveBeenCalledWith(ENTRY));
    const post = calls.find((c) => c.method === 'POST');
    expect(new URL(post!.url).pathname).toBe('/api/targets/db/apply');
    expect(JSON.parse(await post!.text())).toEqual({
      variable: 'thread_pool_stall_limit',
      value: '30',
      recommendation_id: 'db:thread_pool_stall_limit',
      guard: false,
    });
  });

  it('a change with no recommendation behind it is marked manual', () => {
    const manual: AuditEntry = { ...ENTRY, id: 5, recommendation_id: null, manual: true };
    renderWithClient(<AuditPanel target="db" entries={[manual, ENTRY]} error={null} onChanged={() => {}} />);
    expect(within(screen.getByTestId('audit-row-5')).getByTestId('audit-manual').textContent).toBe('manual');
    expect(within(screen.getByTestId('audit-row-7')).queryByTestId('audit-manual')).toBeNull();
  });

  it('the audit list reverts and shows a refusal clearly', async () => {
    vi.stubGlobal(
      'fetch',
      vi.fn<() => Promise<Response>>(async () => json(409, { detail: 'thread_pool_stall_limit is 40 now' })),
    );
    renderWithClient(<AuditPanel target="db" entries={[ENTRY]} error={null} onChanged={() => {}} />);
    expect(screen.getByTestId('audit-row-7').textContent).toContain('500 → 30');
    fireEvent.click(screen.getByTestId('audit-revert-7'));
    // Nothing is sent before the confirmation, which names the value it puts back.
    expect(screen.getByTestId('revert-restores').textContent).toBe('500');
    expect(vi.mocked(fetch)).not.toHaveBeenCalled();
    fireEvent.click(screen.getByTestId('revert-confirm'));
    expect((await screen.findByTestId('audit-error')).textContent).toContain('is 40 now');
  });

  it('an applied change whose read-back failed says so and can be reverted; failed ones cannot', async () => {
    const calls: Request[] = [];
    const reverted: AuditEntry = { ...ENTRY, id: 9, action: 'revert', old_value: '30', new_value: '500', reverts_id: 8 };
    vi.stubGlobal(
      'fetch',
      vi.fn<(...args: [RequestInfo | URL, RequestInit?]) => Promise<Response>>(async (...args) => {
        calls.push(asRequest(args));
        return json(200, reverted);
      }),
    );
    const onChanged = vi.fn<(e: AuditEntry) => void>();
    const unverified: AuditEntry = {
      ...ENTRY,
      id: 8,
      result: 'unverified',
      detail: 'SET GLOBAL was accepted but reading the value back failed; a revert puts back 500',
    };
    const failed: AuditEntry = { ...ENTRY, id: 6, result: 'failed', detail: 'the server refused' };
    renderWithClient(<AuditPanel target="db" entries={[unverified, ENTRY, failed]} error={null} onChanged={onChanged} />);
    const row = screen.getByTestId('audit-row-8');
    expect(row.getAttribute('data-result')).toBe('unverified');
    expect(within(row).getByTestId('audit-result').textContent).toBe('applied, read-back failed');
    expect(row.textContent).toContain('a revert puts back 500');
    expect(within(screen.getByTestId('audit-row-7')).getByTestId('audit-result').textContent).toBe('applied');
    expect(screen.queryByTestId('audit-revert-6')).toBeNull();
    fireEvent.click(screen.getByTestId('audit-revert-8'));
    fireEvent.click(screen.getByTestId('revert-cancel'));
    expect(screen.queryByTestId('revert-dialog')).toBeNull();
    expect(calls).toHaveLength(0);
    fireEvent.click(screen.getByTestId('audit-revert-8'));
    fireEvent.click(screen.getByTestId('revert-confirm'));
    await waitFor(() => expect(onChanged).toHaveBeenCalledWith(reverted));
    expect(new URL(calls.find((c) => c.method === 'POST')!.url).pathname).toBe('/api/targets/db/audit/8/revert');
  });

  it('turns changes that took effect into chart markers', () => {
    const markers = auditMarkers([
      ENTRY,
      { ...ENTRY, id: 8, result: 'failed' },
      { ...ENTRY, id: 9, action: 'auto_revert' },
      { ...ENTRY, id: 10, result: 'unverified' },
    ]);
    expect(markers.map((m) => m.id)).toEqual(['#7', '#9', '#10']);
    expect(markers[1].label).toContain('auto-revert');
    expect(markers[2].label).toContain('(unverified)');
  });

  it('saves the audit list as CSV, every entry with its result', () => {
    const csv = toCsv([ENTRY], AUDIT_CSV).split('\r\n');
    expect(csv[0]).toBe('id,at,user,action,manual,variable,old_value,new_value,result,reverted_by,guard,detail');
    expect(csv[1]).toContain(`7,${new Date(ENTRY.ts * 1000).toISOString()},`);
    expect(csv[1]).toContain(',thread_pool_stall_limit,500,30,applied,');
  });
});

import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { HeldDigest, HeldOut } from '../../api/types';
import { makeGroup, makeState } from '../../test/fixtures';
import { stubFetch } from '../../test/fakes';
import { renderWithClient } from '../../test/render';
import { HeldPanel } from './HeldPanel';
import { HoldersStrip } from './HoldersStrip';

const digest = (over: Partial<HeldDigest>): HeldDigest => ({
  digest: 'd',
  text: 'SELECT ?',
  held_s: 0,
  stalled_s: 0,
  queued_s: 0,
  stall_episodes: 0,
  calls: 0,
  max_time_s: null,
  clients: [],
  groups: [],
  ...over,
});

const HEAVY = digest({
  digest: 'heavy',
  text: 'SELECT BENCHMARK(?, MD5(?))',
  held_s: 12,
  stalled_s: 9,
  stall_episodes: 1,
  calls: 3,
  max_time_s: 6,
  clients: ['sbtest@127.0.0.1'],
  groups: ['1'],
});
const LIGHT = digest({ digest: 'light', text: 'SELECT ? + ?', queued_s: 30, clients: ['app@10.0.0.9'], groups: ['1'] });

beforeEach(() => window.history.replaceState(null, '', '/targets/sandbox?from=1000&to=1300'));
afterEach(() => vi.unstubAllGlobals());

describe('HeldPanel', () => {
  it('ranks by stalled seconds over the range, and switches to queued seconds', async () => {
    const asked: URL[] = [];
    stubFetch({
      '/api/targets/sandbox/held': (u): { body: HeldOut } => {
        asked.push(u);
        const sort = u.searchParams.get('sort') as HeldOut['sort'];
        return { body: { from: 1000, to: 1300, sort, digests: sort === 'queued' ? [LIGHT, HEAVY] : [HEAVY, LIGHT] } };
      },
    });
    renderWithClient(<HeldPanel name="sandbox" range={{ kind: 'custom', from: 1000, to: 1300 }} />);
    const rows = await screen.findAllByTestId('held-row');
    expect(rows.map((r) => r.dataset.digest)).toEqual(['heavy', 'light']);
    expect(rows[0].textContent).toContain('SELECT BENCHMARK(?, MD5(?))');
    expect(rows[0].textContent).toContain('sbtest@127.0.0.1');
    expect(asked[0].searchParams.get('from')).toBe('1000');
    expect(asked[0].searchParams.get('to')).toBe('1300');
    expect(asked[0].searchParams.get('sort')).toBe('stalled');
    fireEvent.click(screen.getByTestId('held-sort-queued'));
    expect(screen.getByTestId('held-sort-queued').getAttribute('aria-pressed')).toBe('true');
    await waitFor(() => expect(screen.getAllByTestId('held-row')[0].dataset.digest).toBe('light'));
    expect(asked.at(-1)!.searchParams.get('sort')).toBe('queued');
  });

  it('says when nobody held the pool in the range', async () => {
    stubFetch({ '/api/targets/sandbox/held': () => ({ body: { from: 1000, to: 1300, sort: 'stalled', digests: [] } }) });
    renderWithClient(<HeldPanel name="sandbox" range={{ kind: 'custom', from: 1000, to: 1300 }} />);
    expect((await screen.findByTestId('held-empty')).textContent).toContain('nobody held the pool');
  });
});

describe('HoldersStrip', () => {
  const holders = [
    {
      group_id: 1,
      stalled: true,
      queue_length: 4,
      holders: [
        {
          connection_id: 9,
          user: 'sbtest',
          host: '127.0.0.1:5000',
          db: null,
          command: 'Query',
          state: 'Updating',
          time_s: 7,
          info: "UPDATE t SET v = 1 WHERE id = 'x'",
          digest: 'dd',
          digest_text: 'UPDATE t SET v = ? WHERE id = ?',
          digest_source: 'poolscope' as const,
          waits_on: 'row lock',
          blockers: [
            {
              kind: 'row_lock' as const,
              connection_id: 3,
              user: 'batch',
              host: '10.0.0.2:1',
              trx_id: '77',
              trx_age_s: 30,
              command: 'Query',
              statement: 'UPDATE t SET v = v + 1 WHERE id = 1 AND SLEEP(12) = 0',
              object: null,
              lock_type: null,
            },
          ],
        },
      ],
    },
  ];

  it('names the holders of a stalled group and their blockers', () => {
    const state = makeState({
      groups: [makeGroup({ group_id: 0 }), makeGroup({ group_id: 1, stalled: true, stall_reason: 'no_dequeue' })],
      holders,
      holders_scope: 'group',
      holders_notes: ['metadata locks: turn on the mdl instrument'],
    });
    render(<HoldersStrip state={state} />);
    const group = screen.getByTestId('holders-group');
    expect(group.dataset.group).toBe('1');
    expect(group.textContent).toContain('Group 1 stalled');
    const holder = within(group).getByTestId('holder');
    expect(holder.dataset.connection).toBe('9');
    expect(holder.textContent).toContain('UPDATE t SET v = ? WHERE id = ?');
    const blocker = within(holder).getByTestId('blocker');
    expect(blocker.dataset.connection).toBe('3');
    expect(blocker.textContent).toContain('SLEEP(12)');
    expect(screen.getByTestId('holders-note').textContent).toContain('mdl instrument');
  });

  it('is not there while no group is stalled', () => {
    const state = makeState({ holders: holders.map((g) => ({ ...g, stalled: false })), holders_scope: 'group' });
    const { container } = render(<HoldersStrip state={state} />);
    expect(container.textContent).toBe('');
  });

  it('says so where the server has no per-group view', () => {
    const state = makeState({
      groups: [makeGroup({ group_id: 0, stalled: true, stall_reason: 'no_dequeue' })],
      holders: [{ ...holders[0], group_id: null, stalled: false }],
      holders_scope: 'server',
    });
    render(<HoldersStrip state={state} />);
    expect(screen.getByTestId('holders-group').textContent).toContain('The pool');
    expect(screen.getByTestId('holders-whole-pool').textContent).toContain('no per-group view');
  });
});

// Types mirroring docs/API.md (the backend contract). Keep field names identical to the JSON.

export type Epoch = number; // UNIX seconds (float)

export type TargetStatus = 'up' | 'down' | 'starting';
export type Flavor = 'mariadb' | 'mysql' | 'percona' | 'alisql' | 'unknown';
/** Which thread pool implementation runs (backend poolscope/flavors.py); null when none / off. */
export type PoolKind = 'mariadb' | 'percona' | 'mysql_enterprise';
/** What a server can report (ServerInfo.capabilities): the UI offers only these panels. */
export type Capability =
  | 'groups'
  | 'group_stats'
  | 'queue_entries'
  | 'waits'
  | 'pool_threads'
  | 'queue_wait_stats'
  /** Percona 8.4.10+: requests waiting in the whole pool's queues (no per-group figure). */
  | 'queue_depth';
export type QueueTimeMode = 'exact' | 'coarse';
export type PortKind = 'extra_port' | 'admin_port' | 'port' | 'fixture';

export interface ServerInfo {
  flavor: Flavor;
  version: string;
  thread_handling: string;
  pool_enabled: boolean;
  pool_tables: string[];
  exact_stats: boolean | null;
  queue_time_mode: QueueTimeMode | null;
  extra_port: number;
  version_tuple?: [number, number, number];
  pool_kind?: PoolKind | null;
  /** @@version_comment, e.g. "MySQL Enterprise Server - Commercial". */
  edition?: string | null;
  admin_port?: number;
  capabilities?: Capability[];
  /** How this server is read (unknown/future version, Percona-derived pool, replayed fixture). */
  notes?: string[];
  /** Pool off: what enabling it involves on this flavor, and a config snippet. */
  enable_hint?: string | null;
  enable_snippet?: string | null;
  /** The pool runs but this user cannot read its tables: the privilege, as GRANT spells it. */
  pool_grant_needed?: string | null;
}

export interface ConnectionInfo {
  host: string;
  port: number;
  port_kind: PortKind;
  note: string | null;
}

export interface CollectorStatus {
  name: string;
  ok: boolean;
  duration_ms: number | null;
  error: string | null;
  skipped: string | null;
  /** Collectors read less often than every poll: their resolution, and the age of the carried reading. */
  every_s?: number | null;
  carried_s?: number | null;
  note?: string | null;
}

export interface TargetSummary {
  queue_length: number | null;
  queued_connections: number | null;
  groups: number | null;
  stalled_groups: number | null;
  threads_connected: number | null;
  threads_running: number | null;
  qps: number | null;
  tps: number | null;
  active_transactions: number | null;
  pool_threads?: number | null;
  pool_idle_threads?: number | null;
}

export interface Target {
  name: string;
  status: TargetStatus;
  reason: string | null;
  server: ServerInfo | null;
  connection: ConnectionInfo | null;
  /** Last poll attempt (successful or not). */
  last_poll_at: Epoch | null;
  /** Last poll that reached the server; older backends may omit it. */
  last_success_at?: Epoch | null;
  poll_duration_ms: number | null;
  poll_interval_s: number | null;
  /** While down: the pause before the next attempt (retries back off); null while up. */
  retry_in_s?: number | null;
  collectors: CollectorStatus[];
  missing_privileges: string[];
  summary: TargetSummary | null;
}

export type StallReason = 'stalls_counter' | 'no_dequeue' | 'server_flag';

export interface GroupState {
  group_id: number;
  connections: number | null;
  threads: number | null;
  active_threads: number | null;
  standby_threads: number | null;
  queue_length: number | null;
  has_listener: boolean | null;
  is_stalled: boolean | null;
  stalled: boolean;
  stall_reason: StallReason | null;
  retired: boolean;
  stalls_per_s: number | null;
  thread_creations_per_s: number | null;
  thread_creations_due_to_stall_per_s: number | null;
  dequeues_per_s: number | null;
  throttles_per_s: number | null;
  wakes_per_s: number | null;
  oldest_queued_ms: number | null;
  /** MySQL Enterprise: Δstalled / Δexecuted statements since the last poll. */
  stalled_query_ratio?: number | null;
  /** MySQL Enterprise: statements the pool marked stalled right now. */
  stalled_threads?: number | null;
}

/** Percona 8.4.10+: avg…cnt cover every request since server start; window_* the requests of the last poll(s). */
export interface QueueWaitStat {
  name: string;
  avg: number | null;
  min: number | null;
  max: number | null;
  dev: number | null;
  cnt: number | null;
  window_avg?: number | null;
  window_count?: number | null;
  window_s?: number | null;
}

/** Percona 8.4.10+: requests waiting now, summed over all groups by the server. */
export interface QueueDepth {
  normal: number | null;
  high: number | null;
  starved: number | null;
}

/** MySQL Enterprise 8.0.31+: the Admin thread group (TP_CONNECTION_ADMIN connections). */
export interface AdminGroup {
  group_id: number;
  queries_per_s: number | null;
  connections_per_s: number | null;
}

/** MySQL Enterprise tp_thread_state, summarised (STATE and MARKED_STALLED from 8.4). */
export interface ThreadStates {
  threads: number;
  by_state: Record<string, number>;
  by_type: Record<string, number>;
  marked_stalled: number | null;
  waiting: Record<string, number>;
}

/** Whole-pool figures (for Percona the only pool data there is). */
export interface PoolSummary {
  kind: PoolKind | null;
  size: number | null;
  stall_limit_ms: number | null;
  stall_limit_raw: string | null;
  threads: number | null;
  idle_threads: number | null;
  high_prio_mode: string | null;
  high_prio_tickets: string | null;
  queue_wait: QueueWaitStat[];
  queue_depth?: QueueDepth | null;
  admin_group?: AdminGroup | null;
  thread_states?: ThreadStates | null;
}

export interface QueuedConnection {
  group_id: number;
  position: number;
  priority: string | null;
  connection_id: number;
  queueing_time_ms: number | null;
  user: string | null;
  host: string | null;
  db: string | null;
  command: string | null;
  time_s: number | null;
  state: string | null;
  /** Usually null: a queued request is unread, so PROCESSLIST shows the connection as Sleep. */
  info: string | null;
  /** The last statement Poolscope saw this connection run, and how long ago. */
  last_sql?: string | null;
  last_sql_seen_s_ago?: number | null;
}

export interface Session {
  id: number;
  user: string | null;
  host: string | null;
  db: string | null;
  command: string;
  time_s: number | null;
  state: string | null;
  info: string | null;
}

export interface TransactionItem {
  trx_id: string;
  state: string | null;
  started_at: Epoch | null;
  age_s: number | null;
  wait_s: number | null;
  thread_id: number | null;
  user: string | null;
  host: string | null;
  db: string | null;
  query: string | null;
  rows_locked: number | null;
  rows_modified: number | null;
}

export interface Transactions {
  count: number | null;
  longest_age_s: number | null;
  lock_waits: number | null;
  /** Listed are transactions open at least this long or in lock wait; the counts cover all. */
  listed_min_age_s?: number | null;
  items: TransactionItem[];
}

export interface WaitRow {
  reason: string;
  count: number | null;
  per_s: number | null;
}

export interface Threads {
  connected: number | null;
  running: number | null;
  cached: number | null;
  created_per_s: number | null;
  pool_threads: number | null;
  pool_idle_threads: number | null;
}

export interface Throughput {
  qps: number | null;
  tps: number | null;
  connections_per_s: number | null;
  aborted_connects_per_s: number | null;
  aborted_clients_per_s: number | null;
}

export interface Ratio {
  value: number | null;
  window_s: number | null;
  regime: string | null;
  note: string | null;
}

export interface Ratios {
  thread_cache_miss: Ratio | null;
  buffer_pool_miss: Ratio | null;
}

export interface TargetState {
  target: string;
  ts: Epoch;
  status: TargetStatus;
  groups: GroupState[];
  /** At most the 200 longest waiters. */
  queue: QueuedConnection[];
  /** All queued connections (queue may be truncated). */
  queued_connections?: number | null;
  /** Active PROCESSLIST rows (not Sleep), longest first, at most 500. */
  sessions?: Session[];
  transactions: Transactions | null;
  waits: WaitRow[];
  threads: Threads | null;
  throughput: Throughput | null;
  ratios: Ratios | null;
  variables: Record<string, string> | null;
  pool?: PoolSummary | null;
  collectors: CollectorStatus[];
  missing_privileges: string[];
}

export type Labels = Record<string, string>;
export type Point = [Epoch, number | null];

export interface Series {
  metric: string;
  labels: Labels;
  points: Point[];
}

export interface MetricsResponse {
  from: Epoch;
  to: Epoch;
  step_s: number;
  resolution: string; // "raw" | "rollup"
  series: Series[];
}

export interface Sample {
  metric: string;
  labels: Labels;
  value: number | null;
}

/** Payload of one `event: poll` on /api/live. */
export interface PollEvent {
  target: string;
  ts: Epoch;
  target_info: Target;
  state: TargetState | null;
  samples: Sample[];
}

// --- alerts and incident snapshots (issue #3; docs/API.md "Alerts", "Snapshots") ---------------

export type AlertStatus = 'pending' | 'firing' | 'resolved';
export type AlertTransition = 'pending' | 'firing' | 'resolved' | 'acknowledged' | 'silenced' | 'unsilenced' | 'updated';

export interface Alert {
  id: number | null;
  fingerprint: string;
  target: string;
  rule: string;
  group: string | null;
  severity: 'critical' | 'warning';
  status: AlertStatus;
  summary: string;
  description: string;
  value: number | null;
  labels: Record<string, string>;
  started_at: Epoch;
  fired_at: Epoch | null;
  resolved_at: Epoch | null;
  last_active_at: Epoch;
  poll_ts: Epoch | null;
  flapping: boolean;
  acked_by: string | null;
  acked_at: Epoch | null;
  silenced_by: number | null;
  snapshot_id: number | null;
}

export interface AlertEvent {
  target: string;
  ts: Epoch;
  transition: AlertTransition;
  alert: Alert;
}

export interface Silence {
  id: number;
  target: string | null;
  rule: string | null;
  group: string | null;
  starts_at: Epoch;
  ends_at: Epoch;
  created_by: string;
  comment: string;
}

export interface AlertsResponse {
  active: Alert[];
  silences: Silence[];
}

export interface Delivery {
  id: number;
  receiver: string;
  alert_id: number | null;
  fingerprint: string;
  alert_status: string;
  outcome: 'delivered' | 'retrying' | 'failed' | 'dropped';
  attempt: number;
  http_status: number | null;
  error: string | null;
  at: Epoch;
  duration_ms: number | null;
}

export interface SnapshotSummary {
  id: number;
  target: string;
  title: string;
  trigger: 'alert' | 'manual' | 'import';
  status: 'collecting' | 'complete';
  created_at: Epoch;
  moment_ts: Epoch;
  window_from: Epoch;
  window_to: Epoch;
  alert_id: number | null;
  size_bytes: number;
}

export interface SnapshotDocument {
  format: 'poolscope-snapshot';
  schema_version: 1;
  poolscope_version: string;
  title: string;
  target: string;
  trigger: 'alert' | 'manual' | 'import';
  alert_id: number | null;
  created_at: Epoch;
  moment_ts: Epoch;
  window: { from: Epoch; to: Epoch; before_s: number; after_s: number; complete: boolean };
  redacted_sql: boolean;
  target_info: Target;
  state: TargetState;
  server_tables: {
    captured_at: Epoch | null;
    port_kind: string | null;
    global_status: Record<string, string>;
    global_variables: Record<string, string>;
    errors: Record<string, string>;
    processlist: Record<string, string | number | null>[];
    innodb_lock_waits: Record<string, string | number | null>[];
  };
  series: Series[];
  step_s: number;
  alerts: Alert[];
  variable_changes: { at: Epoch; variable: string; old_value: string | null; new_value: string | null; by: string | null }[];
}

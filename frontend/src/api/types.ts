// The API's shapes, as the UI names them: aliases of the types generated from the backend's
// OpenAPI document (schema.gen.ts, from openapi.json; `make contract` regenerates both). A field
// changes in the backend's models (backend/poolscope/schemas/ and the api/ routes), never here.
import type { components } from './schema.gen';

type Schemas = components['schemas'];

export type Epoch = number; // UNIX seconds (float)

export type Health = Schemas['Health'];
export type StoreStatus = Schemas['StoreOut'];
export type Target = Schemas['TargetInfo'];
export type TargetStatus = Target['status'];
export type ServerInfo = Schemas['ServerInfo'];
export type Flavor = ServerInfo['flavor'];
/** Which thread pool implementation runs (backend poolscope/flavors.py); null when none / off. */
export type PoolKind = NonNullable<ServerInfo['pool_kind']>;
/**
 * What a server can report (ServerInfo.capabilities, the backend's flavors.CAP_* names, typed as
 * plain strings there): the UI offers only these panels.
 */
export type Capability =
  | 'groups'
  | 'group_stats'
  | 'queue_entries'
  | 'waits'
  | 'pool_threads'
  | 'queue_wait_stats'
  /** Percona 8.4.10+: requests waiting in the whole pool's queues (no per-group figure). */
  | 'queue_depth';
export type QueueTimeMode = NonNullable<ServerInfo['queue_time_mode']>;
export type ConnectionInfo = Schemas['ConnectionInfo'];
export type PortKind = ConnectionInfo['port_kind'];
export type CollectorStatus = Schemas['CollectorStatus'];
export type TargetSummary = Schemas['TargetSummary'];

export type TargetState = Schemas['TargetState'];
export type GroupState = Schemas['GroupState'];
export type StallReason = NonNullable<GroupState['stall_reason']>;
export type QueueWaitStat = Schemas['QueueWaitStat'];
export type QueueDepth = Schemas['QueueDepth'];
export type AdminGroup = Schemas['AdminGroup'];
export type ThreadStates = Schemas['ThreadStates'];
export type PoolSummary = Schemas['PoolSummary'];
export type QueuedConnection = Schemas['QueuedConnection'];
export type Session = Schemas['Session'];
export type TransactionItem = Schemas['Transaction'];
export type GroupHolders = Schemas['GroupHolders'];
export type Holder = Schemas['Holder'];
export type HeldOut = Schemas['HeldOut'];
export type HeldDigest = Schemas['HeldDigest'];
export type HeldSort = HeldOut['sort'];
export type Transactions = Schemas['Transactions'];
export type WaitRow = Schemas['WaitReason'];
export type Threads = Schemas['Threads'];
export type Throughput = Schemas['Throughput'];
export type Ratio = Schemas['Ratio'];
export type Ratios = Schemas['Ratios'];

export type MetricsResponse = Schemas['MetricsOut'];
export type Series = Schemas['SeriesOut'];
export type Labels = Series['labels'];
export type Point = Series['points'][number];
export type Sample = Schemas['Sample'];

/** Payloads of the /api/live stream, by event name (`event: poll`, `event: alert`). */
export type PollEvent = Schemas['LiveEvents']['poll'];
export type AlertEvent = Schemas['LiveEvents']['alert'];

export type Alert = Schemas['Alert'];
export type AlertStatus = Alert['status'];
export type AlertTransition = AlertEvent['transition'];
export type Silence = Schemas['Silence'];
export type AlertsResponse = Schemas['AlertsOut'];
export type Delivery = Schemas['Delivery'];

export type SnapshotSummary = Schemas['SnapshotSummary'];
export type SnapshotDocument = Schemas['SnapshotDocument'];

/** GET /api/overview: one compact row per target, for the fleet table. */
export type Overview = Schemas['Overview'];
export type OverviewRow = Schemas['OverviewRow'];

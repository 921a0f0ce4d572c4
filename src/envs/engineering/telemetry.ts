import { mixSeed, Rng } from '../../core/rng.js';
import { serviceDef, usesDatabase } from './fleet.js';
import type { Incident, ServiceSpec } from './incident.js';

/**
 * What the fleet shows: metric time series and log lines, computed from the incident, the task's seed and the
 * live state (the fault is active from its onset until the agent fixes it; an action writes its own log lines).
 * Everything is a pure function of those, so a series or a log read twice reads the same, and the same seed
 * gives the same fleet.
 *
 * - **Metrics**: each service's baseline with ±10% noise, plus the fault's effect: on the faulty service its
 *   signature (errors after a bad deploy; CPU pinned and latency ×10 when saturated; disk climbing to 99% before
 *   writes fail; database connections climbing to the pool's size with a leak; …), on every service that calls
 *   it, directly or not, errors that halve with each hop and, for timeouts, latency.
 * - **Logs**: per minute, 1–3 lines of noise (requests, health checks, GC pauses, the odd slow request or retried
 *   call), the deploys and config reloads of the history, the fault's lines on the faulty service and timeouts
 *   or upstream errors on its callers, and the agent's actions.
 */

/** The metrics `query_metrics` serves. */
export const METRICS = ['error_rate', 'latency_p99_ms', 'requests_per_s', 'cpu_pct', 'memory_pct', 'disk_pct', 'db_connections'] as const;

/** A metric name. */
export type MetricName = (typeof METRICS)[number];

/** The live state of the fleet that telemetry reads (see actions.ts `FleetState`). */
export interface TelemetryState {
  /** The current minute (0 at the page; each change takes 5 minutes). */
  now: number;
  /** When the fault was fixed (undefined while it is not). */
  fixedAt: number | undefined;
  config: Record<string, Record<string, string>>;
  /** Log lines the agent's actions wrote. */
  actionLog: readonly LogEntry[];
}

/** A log line before formatting. */
export interface LogEntry {
  service: string;
  at: number;
  second: number;
  level: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR' | 'LOG';
  text: string;
}

/** `HH:MM` of minute `t` of an incident. */
export function clockTime(inc: Incident, t: number): string {
  const m = (((inc.clock + t) % 1440) + 1440) % 1440;
  return `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
}

const METRIC_INDEX = new Map<string, number>(METRICS.map((m, i) => [m, i]));

/**
 * The seed of one (service, kind of draw, minute). The task seed is hashed before the parts join it: `mixSeed`
 * folds its first part into the raw seed, so consecutive task seeds with consecutive service indices would share
 * their streams (`mixSeed(s, i)` is `mixSeed(s ^ i ^ j, j)`).
 */
function drawSeed(seed: number, svc: number, what: number, t: number): number {
  if (seed !== hashed.seed) hashed = { seed, hash: mixSeed(seed) };
  return mixSeed(hashed.hash, svc, what, t + 100_000);
}
// The last task seed's hash: an episode draws thousands of times from one task.
let hashed = { seed: NaN, hash: 0 };

/** Noise in [-1, 1] for (service, metric, minute). */
function noise(seed: number, svc: number, metric: number, t: number): number {
  return (drawSeed(seed, svc, metric, t) / 2 ** 31) * 2 - 1;
}

/** Whether the fault hurts at minute `t`. */
export function faultActive(inc: Incident, state: TelemetryState, t: number): boolean {
  return t >= inc.fault.onset && !(state.fixedAt !== undefined && t >= state.fixedAt);
}

/** The error rate (%) the fault adds to `service` at `t` (its share on callers halves with each hop). */
function extraErrors(inc: Incident, hops: number, t: number, n: number): number {
  const f = inc.fault;
  if (hops === 0) {
    if (f.kind === 'saturated_dependency') return 3 + 2 * Math.abs(n);
    if (f.kind === 'config_change' && f.changeKind === 'max_workers') return f.severity * 0.4;
    return f.severity * (1 + 0.15 * n) * Math.min(1, (t - f.onset + 5) / 10);
  }
  return f.severity * 0.5 ** hops * (1 + 0.15 * n);
}

/** The latency factor the fault puts on `service`. */
function latencyFactor(inc: Incident, hops: number): number {
  const f = inc.fault;
  const waits = f.kind === 'saturated_dependency' || f.kind === 'connection_leak' || f.changeKind === 'db_pool_size' || f.changeKind === 'max_workers';
  if (hops > 0) return waits ? 1 + 4 * 0.5 ** (hops - 1) : 1.2;
  switch (f.kind) {
    case 'bad_deploy':
      return 1.3;
    case 'saturated_dependency':
      return 10;
    case 'disk_full':
      return 1.5;
    case 'connection_leak':
      return 5;
    case 'config_change':
      return f.changeKind === 'request_timeout_ms' ? 0.6 : f.changeKind === 'max_workers' ? 8 : f.changeKind === 'db_pool_size' ? 4 : 1.1;
  }
}

/** The database pool size of a service now. */
export function poolSize(state: TelemetryState, service: string): number {
  return Number(state.config[service]?.db_pool_size ?? 0);
}

/** A ramp from `from` at `t0` to `to` at `t1`. */
const ramp = (t: number, t0: number, t1: number, from: number, to: number): number => (t <= t0 ? from : t >= t1 ? to : from + ((to - from) * (t - t0)) / (t1 - t0));

/**
 * The value of `metric` of service `index` at minute `t`. `db_connections` is 0 for a service without a pool.
 */
export function metricAt(inc: Incident, seed: number, state: TelemetryState, index: number, metric: MetricName, t: number): number {
  const s = inc.services[index] as ServiceSpec;
  const b = s.base;
  const f = inc.fault;
  const n = noise(seed, index, METRIC_INDEX.get(metric) as number, t);
  const hops = inc.reach[s.name];
  const active = hops !== undefined && faultActive(inc, state, t);
  const own = active && hops === 0;
  const fixed = state.fixedAt !== undefined && t >= state.fixedAt;
  switch (metric) {
    case 'error_rate':
      return b.errorRate * (1 + 0.3 * n) + (active ? extraErrors(inc, hops, t, n) : 0);
    case 'latency_p99_ms':
      return b.latencyP99Ms * (1 + 0.1 * n) * (active ? latencyFactor(inc, hops) : 1);
    case 'requests_per_s':
      return b.requestsPerS * (1 + 0.05 * n) * (own && f.kind === 'saturated_dependency' ? 2.4 : 1);
    case 'cpu_pct':
      if (own && f.kind === 'saturated_dependency') return Math.min(99.5, 96 + 3 * Math.abs(n));
      return b.cpuPct * (1 + 0.1 * n) * (own && f.changeKind === 'max_workers' ? 0.4 : 1);
    case 'memory_pct': {
      const leak = hops === 0 && f.kind === 'connection_leak' && !fixed ? ramp(t, f.onset - 45, f.onset, 0, 15) : 0;
      return b.memoryPct * (1 + 0.05 * n) + leak;
    }
    case 'disk_pct': {
      const base = b.diskPct * (1 + 0.02 * n);
      if (hops !== 0 || f.kind !== 'disk_full' || fixed) return base;
      return t < f.onset ? ramp(t, f.onset - 40, f.onset, base, 96) : Math.min(99.6, 96 + (t - f.onset) * 0.12 + Math.abs(n) * 0.2);
    }
    case 'db_connections': {
      if (!usesDatabase(s)) return 0;
      const pool = poolSize(state, s.name);
      const base = b.dbConnections * (1 + 0.1 * n);
      if (hops === 0 && f.kind === 'connection_leak' && !fixed) return Math.min(pool, ramp(t, f.onset - 45, f.onset, base, pool));
      return Math.min(pool, base);
    }
  }
}

/** Why a service is unhealthy now (empty when it is healthy): the checks a health probe makes. */
export function healthProblems(inc: Incident, seed: number, state: TelemetryState, index: number): string[] {
  const s = inc.services[index] as ServiceSpec;
  const at = (m: MetricName): number => metricAt(inc, seed, state, index, m, state.now);
  const out: string[] = [];
  const err = at('error_rate');
  if (err > 2) out.push(`error rate ${err.toFixed(1)}%`);
  const lat = at('latency_p99_ms');
  if (lat > 3 * s.base.latencyP99Ms) out.push(`p99 latency ${Math.round(lat)} ms`);
  const cpu = at('cpu_pct');
  if (cpu > 90) out.push(`cpu ${cpu.toFixed(0)}%`);
  const disk = at('disk_pct');
  if (disk > 90) out.push(`disk ${disk.toFixed(0)}% full`);
  if (usesDatabase(s)) {
    const conns = at('db_connections');
    const pool = poolSize(state, s.name);
    if (pool > 0 && conns >= pool * 0.95) out.push(`db pool ${Math.round(conns)}/${pool} in use`);
  }
  return out;
}

const HANDLERS = ['CartSerializer', 'PriceCalculator', 'SessionStore', 'OrderMapper', 'StockClient', 'TokenVerifier', 'EventPublisher', 'RouteTable'];
const FIELDS = ['currency', 'items', 'userId', 'region', 'sku', 'expiresAt'];

function pathOf(s: ServiceSpec, rng: Rng): string {
  const paths = serviceDef(s.name).paths;
  return paths.length > 0 ? rng.pick(paths) : '/';
}

function noiseLine(s: ServiceSpec, rng: Rng): Pick<LogEntry, 'level' | 'text'> {
  if (s.name === 'postgres') {
    return rng.pick([
      { level: 'LOG', text: `checkpoint complete: wrote ${rng.int(200, 4000)} buffers (${rng.int(1, 9)}.${rng.int(0, 9)}%)` },
      { level: 'LOG', text: `automatic vacuum of table "shop.public.${rng.pick(['orders', 'carts', 'sessions', 'stock'])}": index scans: 1` },
      { level: 'LOG', text: `duration: ${rng.int(500, 900)} ms  statement: SELECT * FROM orders WHERE user_id = $1` },
      { level: 'LOG', text: 'connection authorized: user=app database=shop' },
    ] as const);
  }
  if (s.name === 'redis') {
    return rng.pick([
      { level: 'INFO', text: `${rng.int(100, 900)} changes in 60 seconds. Saving...` },
      { level: 'INFO', text: 'Background saving terminated with success' },
      { level: 'INFO', text: `expired ${rng.int(50, 4000)} keys in ${rng.int(1, 20)} ms` },
    ] as const);
  }
  if (s.name === 'kafka') {
    return rng.pick([
      { level: 'INFO', text: `[Log partition=events-${rng.int(0, 11)}] Rolled new log segment at offset ${rng.int(100000, 999999)}` },
      { level: 'INFO', text: `[GroupCoordinator] Stabilized group notifications-consumer generation ${rng.int(10, 90)}` },
      { level: 'INFO', text: `Deleted log segment events-${rng.int(0, 11)}/${rng.int(1000, 9999)}.log (retention)` },
    ] as const);
  }
  const r = rng.next();
  if (r < 0.6) return { level: 'INFO', text: `${rng.pick(['GET', 'GET', 'POST'])} ${pathOf(s, rng)} 200 in ${rng.int(8, 140)}ms` };
  if (r < 0.72) return { level: 'INFO', text: 'health check ok' };
  if (r < 0.82) return { level: 'DEBUG', text: `gc pause ${rng.int(2, 30)}ms (heap ${rng.int(40, 70)}%)` };
  if (r < 0.9) return { level: 'WARN', text: `slow request GET ${pathOf(s, rng)} took ${rng.int(800, 1900)}ms` };
  const dep = s.dependsOn.length > 0 ? rng.pick(s.dependsOn) : 'upstream';
  return { level: 'WARN', text: `retrying call to ${dep} (attempt 2/3): connection reset by peer` };
}

/** The fault's lines on the faulty service at minute `t` (while it hurts, and the warnings before). */
function faultLines(inc: Incident, state: TelemetryState, s: ServiceSpec, t: number, rng: Rng): Pick<LogEntry, 'level' | 'text'>[] {
  const f = inc.fault;
  const active = faultActive(inc, state, t);
  const fixed = state.fixedAt !== undefined && t >= state.fixedAt;
  const pool = poolSize(state, s.name);
  switch (f.kind) {
    case 'bad_deploy': {
      if (!active) return [];
      const build = f.deploy?.to ?? s.version;
      const h = rng.pick(HANDLERS);
      return rng.pick([
        [{ level: 'ERROR', text: `500 POST ${pathOf(s, rng)}: TypeError: Cannot read properties of undefined (reading '${rng.pick(FIELDS)}') [build ${build}]` }],
        [{ level: 'ERROR', text: `unhandled exception in ${h}.handle: NullPointerException at ${h}.java:${rng.int(40, 400)} [build ${build}]` }],
        [{ level: 'ERROR', text: `500 GET ${pathOf(s, rng)}: TypeError: Cannot read properties of undefined (reading '${rng.pick(FIELDS)}') [build ${build}]` }, { level: 'WARN', text: `error budget burn rate ${rng.int(8, 20)}x` }],
      ]);
    }
    case 'config_change': {
      if (!active) return [];
      const c = f.change;
      if (!c) return [];
      const dep = s.dependsOn.length > 0 ? rng.pick(s.dependsOn) : 'upstream';
      switch (f.changeKind) {
        case 'request_timeout_ms':
          return [{ level: 'ERROR', text: `call to ${dep} timed out after ${c.to}ms; returning 504 for ${pathOf(s, rng)}` }];
        case 'db_pool_size':
          return [{ level: 'ERROR', text: `could not acquire db connection within 5000ms: pool exhausted (${c.to}/${c.to} in use)` }];
        case 'max_workers':
          return [{ level: 'WARN', text: `request queue depth ${rng.int(150, 900)}: all ${c.to} workers busy` }, { level: 'ERROR', text: `503 ${pathOf(s, rng)}: rejected after ${rng.int(4000, 9000)}ms in queue` }];
        default:
          return [{ level: 'ERROR', text: `500 ${pathOf(s, rng)}: KeyError 'region_v2' in the ${c.key.replace('feature.', '')} code path` }];
      }
    }
    case 'saturated_dependency':
      if (!active) return [];
      if (s.name === 'postgres') return [{ level: 'LOG', text: `duration: ${rng.int(3000, 9000)} ms  statement: SELECT * FROM stock WHERE sku = ANY($1)` }, { level: 'WARN', text: `${rng.int(80, 300)} backends waiting for CPU` }];
      if (s.name === 'redis') return [{ level: 'WARN', text: `slowlog: GET took ${rng.int(80, 400)}ms; ${rng.int(2000, 9000)} clients blocked` }];
      if (s.name === 'kafka') return [{ level: 'WARN', text: `request handler pool ${rng.int(97, 100)}% busy; produce latency ${rng.int(3, 9)}s` }];
      return [{ level: 'WARN', text: `request queue full (depth ${rng.int(512, 2048)}): shedding load` }, { level: 'WARN', text: `slow request GET ${pathOf(s, rng)} took ${rng.int(3000, 9000)}ms` }];
    case 'disk_full': {
      if (fixed) return [];
      if (active) return [{ level: 'ERROR', text: `write failed: No space left on device (/var/lib/${s.name}/spool/${rng.int(1000, 9999)}.tmp)` }];
      if (t >= f.onset - 40 && rng.next() < 0.5) return [{ level: 'WARN', text: `disk usage ${Math.round(ramp(t, f.onset - 40, f.onset, s.base.diskPct, 96))}% on /var/lib/${s.name}` }];
      return [];
    }
    case 'connection_leak': {
      if (fixed) return [];
      if (active) return [{ level: 'ERROR', text: `could not acquire db connection within 5000ms: pool exhausted (${pool}/${pool} in use)` }];
      if (t >= f.onset - 45 && rng.next() < 0.4) return [{ level: 'WARN', text: `db pool: ${Math.round(ramp(t, f.onset - 45, f.onset, s.base.dbConnections, pool))}/${pool} connections in use, 0 idle` }];
      return [];
    }
  }
}

/** A caller's lines at `t`: timeouts or errors from the dependency the fault reaches it through. */
function callerLines(inc: Incident, state: TelemetryState, s: ServiceSpec, hops: number, rng: Rng): Pick<LogEntry, 'level' | 'text'>[] {
  const via = s.dependsOn.filter((d) => inc.reach[d] === hops - 1);
  const dep = rng.pick(via.length > 0 ? via : s.dependsOn);
  if (rng.next() > 0.5 ** (hops - 1) * 0.9) return [];
  const f = inc.fault;
  const timeouts = hops === 1 && (f.kind === 'saturated_dependency' || f.kind === 'connection_leak' || f.changeKind === 'max_workers' || f.changeKind === 'db_pool_size');
  if (timeouts) return [{ level: 'ERROR', text: `call to ${dep} timed out after ${state.config[s.name]?.request_timeout_ms ?? 3000}ms (${pathOf(s, rng)})` }];
  return [{ level: hops === 1 ? 'ERROR' : 'WARN', text: `call to ${dep} failed: HTTP ${rng.pick([500, 502, 503])} (${pathOf(s, rng)})` }];
}

/** The log lines of `service` (index into the fleet) from minute `t`, unsorted. */
function minuteLines(inc: Incident, seed: number, state: TelemetryState, index: number, t: number): LogEntry[] {
  const s = inc.services[index] as ServiceSpec;
  const rng = new Rng(drawSeed(seed, index, 1000, t));
  const out: LogEntry[] = [];
  const add = (l: Pick<LogEntry, 'level' | 'text'>): void => {
    out.push({ service: s.name, at: t, second: rng.int(0, 59), ...l });
  };
  const count = s.tier === 'data' ? rng.int(0, 2) : rng.int(1, 3);
  for (let i = 0; i < count; i++) add(noiseLine(s, rng));
  const hops = inc.reach[s.name];
  if (hops === 0) for (const l of faultLines(inc, state, s, t, rng)) add(l);
  else if (hops !== undefined && faultActive(inc, state, t)) for (const l of callerLines(inc, state, s, hops, rng)) add(l);
  for (const d of inc.deploys) {
    if (d.service !== s.name || d.at !== t) continue;
    add({ level: 'INFO', text: `deploy ${d.from} -> ${d.to}: rolling update started` });
    add({ level: 'INFO', text: `${s.name} ${d.to} started; all replicas ready` });
  }
  for (const c of inc.configChanges) if (c.service === s.name && c.at === t) add({ level: 'INFO', text: `config reloaded: ${c.key}=${c.to}` });
  for (const a of state.actionLog) if (a.service === s.name && a.at === t) out.push(a);
  return out;
}

/** The last `count` log lines of service `index` up to now, oldest first, formatted `HH:MM:SS LEVEL text`. */
export function logTail(inc: Incident, seed: number, state: TelemetryState, index: number, count: number): string[] {
  const out: string[] = [];
  for (let t = state.now; t >= state.now - 240 && out.length < count; t--) {
    const lines = minuteLines(inc, seed, state, index, t).sort((a, b) => b.second - a.second);
    for (const l of lines) {
      if (out.length >= count) break;
      out.push(`${clockTime(inc, l.at)}:${String(l.second).padStart(2, '0')} ${l.level} ${l.text}`);
    }
  }
  return out.reverse();
}

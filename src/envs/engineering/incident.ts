import type { Rng } from '../../core/rng.js';
import { type FaultKind, FRONT_SERVICES, type ServiceDef, serviceDef, type Tier, usesDatabase } from './fleet.js';

/**
 * An incident: a fleet as it stands when the agent is paged, the hidden fault, and the recent history of
 * deploys and config changes — the faulty one among innocent ones. Time is in minutes relative to the page
 * (`0`; the fault began `onset` minutes before it, 15–35 minutes ago); `clock` is the wall-clock minute of
 * the day at time 0, for the timestamps the tools show.
 */

/** A service's normal behaviour (the mean of each metric when nothing is wrong). */
export interface Baseline {
  requestsPerS: number;
  errorRate: number;
  latencyP99Ms: number;
  cpuPct: number;
  memoryPct: number;
  diskPct: number;
  /** Connections in use of its database pool (services that use postgres). */
  dbConnections: number;
}

/** A service of the fleet as it is at the page. */
export interface ServiceSpec {
  name: string;
  tier: Tier;
  dependsOn: string[];
  replicas: number;
  version: string;
  config: Record<string, string>;
  base: Baseline;
}

/** A deploy: `service` went from version `from` to `to` at minute `at`. */
export interface Deploy {
  service: string;
  at: number;
  from: string;
  to: string;
}

/** A config change: `service`'s `key` went from `from` to `to` at minute `at`. */
export interface ConfigChange {
  service: string;
  at: number;
  key: string;
  from: string;
  to: string;
}

/** The config keys a config fault changes, and how each shows. */
export type ConfigFaultKey = 'request_timeout_ms' | 'db_pool_size' | 'max_workers' | 'feature';

/** The hidden fault. */
export interface Fault {
  kind: FaultKind;
  service: string;
  /** When it began to hurt (minutes, negative). */
  onset: number;
  /** The error rate (%) it adds to the faulty service; dependents see a share that halves with each hop. */
  severity: number;
  /** bad_deploy: the deploy that broke it. */
  deploy?: Deploy;
  /** config_change: the change that broke it, and which of the config keys it is. */
  change?: ConfigChange;
  changeKind?: ConfigFaultKey;
  /** saturated_dependency: the replicas that carry the load again (at least twice the current). */
  replicasNeeded?: number;
}

/** An incident (see the module comment). */
export interface Incident {
  services: ServiceSpec[];
  fault: Fault;
  deploys: Deploy[];
  configChanges: ConfigChange[];
  /** Wall-clock minute of the day at time 0. */
  clock: number;
  /** The front service the stakeholder reports trouble on (a dependent of the faulty service, or itself). */
  symptom: string;
  /** For every service the fault reaches, the hops from the faulty service (0 for itself). */
  reach: Record<string, number>;
}

/** The versions a data store runs. */
const DATA_VERSIONS: Readonly<Record<string, readonly string[]>> = { postgres: ['v14.11', 'v15.6', 'v16.2'], redis: ['v7.0.15', 'v7.2.4'], kafka: ['v3.5.2', 'v3.6.1'] };

const version = (rng: Rng): string => `v${rng.int(1, 5)}.${rng.int(0, 30)}.${rng.int(0, 12)}`;

/** The front services a fleet must hold so that `culprit` is in it and reached from the gateway. */
function frontsFor(culprit: string, rng: Rng): string[] {
  if ((FRONT_SERVICES as readonly string[]).includes(culprit)) return [culprit];
  if (culprit === 'gateway') return [];
  const callers = FRONT_SERVICES.filter((f) => closure(f).has(culprit));
  return [rng.pick(callers)];
}

/** A service and everything it depends on, transitively. */
function closure(name: string): Set<string> {
  const out = new Set<string>();
  const visit = (n: string): void => {
    if (out.has(n)) return;
    out.add(n);
    for (const d of serviceDef(n).dependsOn) visit(d);
  };
  visit(name);
  return out;
}

function baseline(def: ServiceDef, rng: Rng, poolSize: number): Baseline {
  const data = def.tier === 'data';
  return {
    requestsPerS: def.tier === 'edge' ? rng.int(600, 1200) : data ? rng.int(800, 2500) : rng.int(80, 400),
    errorRate: rng.int(5, 40) / 100,
    latencyP99Ms: data ? rng.int(4, 25) : def.tier === 'edge' ? rng.int(150, 300) : rng.int(60, 220),
    cpuPct: rng.int(20, 48),
    memoryPct: rng.int(35, 65),
    diskPct: rng.int(25, 62),
    dbConnections: usesDatabase(def) ? Math.round(poolSize * rng.int(20, 40) / 100) : 0,
  };
}

function configOf(def: ServiceDef, rng: Rng): Record<string, string> {
  if (def.name === 'postgres') return { max_connections: String(rng.pick([300, 400, 500])), shared_buffers_mb: String(rng.pick([2048, 4096])), log_min_duration_ms: '500' };
  if (def.name === 'redis') return { maxmemory_mb: String(rng.pick([1024, 2048, 4096])), maxmemory_policy: 'allkeys-lru', appendonly: 'yes' };
  if (def.name === 'kafka') return { retention_hours: String(rng.pick([24, 72, 168])), num_partitions: String(rng.pick([6, 12])), log_segment_mb: '1024' };
  const config: Record<string, string> = {
    log_level: 'info',
    request_timeout_ms: String(rng.pick([1500, 2000, 3000, 5000])),
    max_workers: String(rng.pick([16, 24, 32, 48])),
  };
  if (usesDatabase(def)) config.db_pool_size = String(rng.pick([20, 30, 40, 50]));
  for (const flag of def.flags) config[`feature.${flag}`] = rng.pick(['true', 'false']);
  return config;
}

/** An innocent config change of a non-data service (a value that changes nothing visible). */
function innocentChange(s: ServiceSpec, at: number, rng: Rng): ConfigChange {
  const keys = Object.keys(s.config).filter((k) => k !== 'db_pool_size');
  const key = rng.pick(keys);
  const from = s.config[key] as string;
  let to: string;
  if (key === 'log_level') to = rng.pick(['warn', 'debug']);
  else if (key === 'request_timeout_ms') to = String(Number(from) + rng.pick([500, 1000]));
  else if (key === 'max_workers') to = String(Number(from) + rng.pick([8, 16]));
  else if (key.startsWith('feature.')) to = from === 'true' ? 'false' : 'true';
  else to = String(Math.round(Number(from) * 1.5));
  return { service: s.name, at, key, from, to };
}

/**
 * Draws an incident with a fault of `kind` in `culprit`: the fleet (the culprit and its callers up to the
 * gateway, two more front services and their dependencies), baselines and configs, the fault, and a history of
 * 3–6 deploys and 2–5 config changes, innocent but for the faulty one — some innocent ones close to the onset.
 */
export function drawIncident(kind: FaultKind, culprit: string, rng: Rng): Incident {
  const fronts = new Set(frontsFor(culprit, rng));
  for (const f of rng.shuffle(FRONT_SERVICES)) if (fronts.size < 3) fronts.add(f);
  const names = new Set<string>(['gateway']);
  for (const f of fronts) for (const n of closure(f)) names.add(n);
  const order = ['gateway', ...FRONT_SERVICES, 'payments', 'inventory', 'postgres', 'redis', 'kafka'].filter((n) => names.has(n));

  const services: ServiceSpec[] = order.map((name) => {
    const def = serviceDef(name);
    const config = configOf(def, rng);
    return {
      name,
      tier: def.tier,
      dependsOn: name === 'gateway' ? order.filter((n) => fronts.has(n)) : [...def.dependsOn],
      replicas: def.tier === 'data' ? rng.int(1, 3) : rng.int(2, 8),
      version: def.tier === 'data' ? rng.pick(DATA_VERSIONS[name] ?? ['v1.0.0']) : version(rng),
      config,
      base: baseline(def, rng, Number(config.db_pool_size ?? 0)),
    };
  });
  const byName = new Map(services.map((s) => [s.name, s]));
  const target = byName.get(culprit) as ServiceSpec;
  const onset = -rng.int(15, 35);
  const fault: Fault = { kind, service: culprit, onset, severity: rng.int(12, 30) };
  const deploys: Deploy[] = [];
  const configChanges: ConfigChange[] = [];

  // The history: innocent deploys of apps (never of the culprit after its fault for a deploy fault, and always
  // well before any other fault's onset on the culprit), some near the onset on other services as red herrings.
  const apps = services.filter((s) => s.tier !== 'data');
  const deployCount = rng.int(3, 6);
  for (let i = 0; i < deployCount; i++) {
    const s = rng.pick(apps);
    const near = rng.next() < 0.4;
    let at = near ? onset + rng.int(-8, 4) : -rng.int(40, 180);
    if (s.name === culprit) at = -rng.int(60, 180);
    if (deploys.some((d) => d.service === s.name)) continue;
    deploys.push({ service: s.name, at, from: '', to: '' });
  }
  if (kind === 'bad_deploy') {
    const before = deploys.findIndex((d) => d.service === culprit);
    if (before >= 0) deploys.splice(before, 1);
    const d: Deploy = { service: culprit, at: onset, from: '', to: '' };
    deploys.push(d);
    fault.deploy = d;
  }
  // Versions: each deploy ends at the service's current version.
  for (const d of deploys) {
    const s = byName.get(d.service) as ServiceSpec;
    d.to = s.version;
    // A plausible predecessor: the same major, lower minor.
    const [maj, min] = s.version.slice(1).split('.').map(Number) as [number, number];
    d.from = min > 0 ? `v${maj}.${min - 1}.${rng.int(0, 9)}` : `v${Math.max(maj - 1, 0)}.${rng.int(5, 20)}.${rng.int(0, 9)}`;
  }

  const changeCount = rng.int(2, 5);
  for (let i = 0; i < changeCount; i++) {
    const s = rng.pick(apps);
    const near = rng.next() < 0.4;
    let at = near ? onset + rng.int(-10, 5) : -rng.int(40, 240);
    if (s.name === culprit) at = -rng.int(60, 240);
    if (at === onset) at -= 1;
    const c = innocentChange(s, at, rng);
    if (configChanges.some((x) => x.service === c.service && x.key === c.key)) continue;
    configChanges.push(c);
  }
  if (kind === 'config_change') {
    const options: ConfigFaultKey[] = ['request_timeout_ms', 'max_workers', 'feature'];
    if (target.config.db_pool_size !== undefined) options.push('db_pool_size');
    const changeKind = rng.pick(options);
    const key = changeKind === 'feature' ? rng.pick(Object.keys(target.config).filter((k) => k.startsWith('feature.'))) : changeKind;
    const from = target.config[key] as string;
    const to = changeKind === 'request_timeout_ms' ? String(rng.pick([20, 30, 50])) : changeKind === 'max_workers' ? '1' : changeKind === 'db_pool_size' ? '2' : from === 'true' ? 'false' : 'true';
    for (let i = configChanges.length - 1; i >= 0; i--) if (configChanges[i]?.service === culprit && configChanges[i]?.key === key) configChanges.splice(i, 1);
    const c: ConfigChange = { service: culprit, at: onset, key, from, to };
    configChanges.push(c);
    fault.change = c;
    fault.changeKind = changeKind;
  }
  // Each service's config is as its last change left it.
  for (const c of [...configChanges].sort((a, b) => a.at - b.at)) (byName.get(c.service) as ServiceSpec).config[c.key] = c.to;
  if (kind === 'saturated_dependency') fault.replicasNeeded = target.replicas * 2;
  deploys.sort((a, b) => a.at - b.at);
  configChanges.sort((a, b) => a.at - b.at);

  // How far the fault reaches: every service that calls the faulty one, transitively.
  const reach: Record<string, number> = { [culprit]: 0 };
  for (let hop = 1, frontier = [culprit]; frontier.length > 0; hop++) {
    const next: string[] = [];
    for (const s of services) if (reach[s.name] === undefined && s.dependsOn.some((d) => frontier.includes(d))) {
      reach[s.name] = hop;
      next.push(s.name);
    }
    frontier = next;
  }
  const symptoms = [...fronts].filter((f) => reach[f] !== undefined);
  const symptom = culprit === 'gateway' ? 'gateway' : rng.pick(symptoms.length > 0 ? symptoms : [culprit]);
  return { services, fault, deploys, configChanges, clock: rng.int(8 * 12, 20 * 12) * 5, symptom, reach };
}

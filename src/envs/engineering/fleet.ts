/**
 * The service fleet of `gymflow/engineering-v0`: the catalogue of services a fleet is drawn from (with their
 * dependencies, configuration and baselines), the kinds of hidden fault, and how a stated root cause is read.
 *
 * A fleet is an edge gateway, three front services and everything they depend on, transitively: app services
 * (`payments`, `inventory`, …) and data stores (`postgres`, `redis`, `kafka`). A fault in one service shows in
 * its own metrics and logs and, weaker with each hop, in every service that depends on it (timeouts, 5xx from
 * upstream), so the symptom the stakeholder reports is usually not where the fault is.
 */

/** The kinds of hidden fault, in the order task indices cycle through. */
export const FAULT_KINDS = ['bad_deploy', 'config_change', 'saturated_dependency', 'disk_full', 'connection_leak'] as const;

/** A kind of hidden fault. */
export type FaultKind = (typeof FAULT_KINDS)[number];

/** Where a service sits. */
export type Tier = 'edge' | 'app' | 'data';

/** A service of the catalogue. */
export interface ServiceDef {
  name: string;
  tier: Tier;
  /** The services it calls (for the gateway: the fleet's front services, drawn per task). */
  dependsOn: readonly string[];
  /** Feature flags it has (`feature.NAME`), candidates for a config fault. */
  flags: readonly string[];
  /** The URL paths of its requests (log noise). */
  paths: readonly string[];
}

/** The catalogue: every service a fleet can hold. */
export const SERVICE_CATALOG: readonly ServiceDef[] = [
  { name: 'gateway', tier: 'edge', dependsOn: [], flags: ['http2_push'], paths: ['/', '/api/health', '/static/app.js'] },
  { name: 'checkout', tier: 'app', dependsOn: ['payments', 'inventory', 'postgres'], flags: ['one_click', 'new_pricing'], paths: ['/api/cart', '/api/checkout', '/api/checkout/confirm'] },
  { name: 'search', tier: 'app', dependsOn: ['catalog', 'redis'], flags: ['semantic_ranking'], paths: ['/api/search', '/api/suggest'] },
  { name: 'accounts', tier: 'app', dependsOn: ['postgres', 'redis'], flags: ['passkeys'], paths: ['/api/login', '/api/me', '/api/session'] },
  { name: 'catalog', tier: 'app', dependsOn: ['inventory', 'redis'], flags: ['new_images'], paths: ['/api/products', '/api/products/8841', '/api/products/1203'] },
  { name: 'notifications', tier: 'app', dependsOn: ['kafka'], flags: ['batch_emails'], paths: ['/api/notify', '/api/subscriptions'] },
  { name: 'payments', tier: 'app', dependsOn: ['postgres'], flags: ['3ds_v2'], paths: ['/api/payments/authorize', '/api/payments/capture'] },
  { name: 'inventory', tier: 'app', dependsOn: ['postgres'], flags: ['reservations_v2'], paths: ['/api/stock', '/api/stock/reserve'] },
  { name: 'postgres', tier: 'data', dependsOn: [], flags: [], paths: [] },
  { name: 'redis', tier: 'data', dependsOn: [], flags: [], paths: [] },
  { name: 'kafka', tier: 'data', dependsOn: [], flags: [], paths: [] },
];

/** The front services a gateway can route to (a fleet has three of them). */
export const FRONT_SERVICES = ['checkout', 'search', 'accounts', 'catalog', 'notifications'] as const;

/** The service named `name` of the catalogue. */
export function serviceDef(name: string): ServiceDef {
  const def = SERVICE_CATALOG.find((s) => s.name === name);
  if (!def) throw new RangeError(`engineering: no service '${name}' in the catalogue`);
  return def;
}

/** Whether a service holds a database connection pool (it depends on postgres). */
export const usesDatabase = (def: { dependsOn: readonly string[] }): boolean => def.dependsOn.includes('postgres');

/**
 * The services each fault kind can hit. Every deployable service can get a bad deploy or a bad config change;
 * a saturated dependency is a service others call; a connection leak needs a database pool.
 */
export const FAULT_CANDIDATES: Readonly<Record<FaultKind, readonly string[]>> = {
  bad_deploy: ['gateway', 'checkout', 'search', 'accounts', 'catalog', 'notifications', 'payments', 'inventory'],
  config_change: ['gateway', 'checkout', 'search', 'accounts', 'catalog', 'notifications', 'payments', 'inventory'],
  saturated_dependency: ['payments', 'inventory', 'catalog', 'postgres', 'redis', 'kafka'],
  disk_full: ['gateway', 'checkout', 'search', 'accounts', 'catalog', 'notifications', 'payments', 'inventory', 'postgres', 'redis', 'kafka'],
  connection_leak: ['checkout', 'accounts', 'payments', 'inventory'],
};

/**
 * The fault/service combinations only held-out tasks have: no training task has a bad deploy of `accounts`,
 * a saturated `redis`, a leak in `payments`, …, so held-out incidents are ones an agent has not seen in training.
 */
export const HELDOUT_COMBINATIONS: Readonly<Record<FaultKind, readonly string[]>> = {
  bad_deploy: ['accounts', 'inventory'],
  config_change: ['search', 'payments'],
  saturated_dependency: ['redis', 'catalog'],
  disk_full: ['kafka', 'notifications', 'gateway'],
  connection_leak: ['payments'],
};

/** The words that name each fault kind in a stated root cause (the kind's id counts too). */
export const KIND_WORDS: Readonly<Record<FaultKind, RegExp>> = {
  bad_deploy: /\bbad[_ ]deploy|\b(deploy\w*|release[sd]?|rollout|build|version)\b/i,
  config_change: /\bconfig[_ ]change|\b(config\w*|setting|flag)\b/i,
  saturated_dependency: /\bsaturat\w*|\b(overload\w*|capacity|cpu|under-?provisioned)\b/i,
  disk_full: /\bdisk[_ ]full|\b(disk|no space|storage|volume)\b/i,
  connection_leak: /\bconnection[_ ]leak|\bleak\w*/i,
};

/** The first match of `re` in `text`, as an index (Infinity when none). */
function firstIndex(text: string, re: RegExp): number {
  const m = new RegExp(re.source, re.flags.replace('g', '')).exec(text);
  return m ? m.index : Infinity;
}

/** The service a root cause names first among `services` (undefined when it names none). */
export function namedService(rootCause: string, services: readonly string[]): string | undefined {
  let best: string | undefined;
  let at = Infinity;
  for (const s of services) {
    const i = firstIndex(rootCause, new RegExp(`\\b${s}\\b`, 'i'));
    if (i < at) {
      at = i;
      best = s;
    }
  }
  return best;
}

/** The fault kind a root cause names first (undefined when it names none). */
export function namedKind(rootCause: string): FaultKind | undefined {
  let best: FaultKind | undefined;
  let at = Infinity;
  for (const k of FAULT_KINDS) {
    const i = firstIndex(rootCause, KIND_WORDS[k]);
    if (i < at) {
      at = i;
      best = k;
    }
  }
  return best;
}

/**
 * Whether a stated root cause is the hidden one: the first fleet service it names is the faulty service and the
 * first fault kind it names is the fault's (`checkout: bad_deploy`, or in words, "the v2.14.0 deploy of checkout").
 * Reading the first of each lets the cause be explained ("payments is saturated, so checkout times out") and
 * stops a hedge ("checkout or payments") from counting for either.
 */
export function rootCauseMatches(rootCause: string, fault: { kind: FaultKind; service: string }, services: readonly string[]): boolean {
  return namedService(rootCause, services) === fault.service && namedKind(rootCause) === fault.kind;
}

/**
 * Fault injection for tests and the soak (`npm run soak`, docs/operations.md "Soak"): TEST-ONLY, never active
 * by default. A worker started with `GYMFLOW_FAULTS` set reads it once at start ({@link installFaultsFromEnv})
 * and from then on fails a share of the operations at the named points, the way the real failure would:
 *
 *   GYMFLOW_FAULTS='sandbox.exec=0.25,seed=7'
 *
 * - `sandbox.exec`: the engine refuses an agent's exec in a sandbox (as Docker does when a container has no
 *   pids left or the daemon hiccups). The sandbox's own recovery runs (health check, replacement when needed)
 *   and the agent sees an observation saying the exec failed.
 *
 * Without the variable {@link injectFault} is one comparison and never throws. Other parts fail through the
 * loopback servers the soak puts in front of them (the judge's API, the policy server), not through this hook.
 */
import { ConfigError, GymflowError } from './errors.js';
import { mixSeed, Rng } from './rng.js';

/** The operations a fault can be injected into. */
export const FAULT_POINTS = ['sandbox.exec'] as const;
/** One of {@link FAULT_POINTS}. */
export type FaultPoint = (typeof FAULT_POINTS)[number];

/** The environment variable that turns fault injection on in a worker (test-only). */
export const FAULTS_ENV = 'GYMFLOW_FAULTS';

/** Failure rates per point (each in [0, 1]) and the seed of the draws. */
export interface FaultPlan {
  rates: Partial<Record<FaultPoint, number>>;
  seed: number;
}

/** The failure an injected fault throws: its message says it was injected, and where. */
export class InjectedFault extends GymflowError {
  constructor(readonly point: FaultPoint) {
    super('INJECTED_FAULT', `injected fault at ${point} (${FAULTS_ENV}, test-only)`);
  }
}

let active: { plan: FaultPlan; rng: Rng; counts: Map<FaultPoint, { calls: number; injected: number }> } | undefined;

/**
 * Parses the value of {@link FAULTS_ENV}: comma-separated `point=rate` pairs and an optional `seed=N`.
 *
 * @throws ConfigError naming the variable, the item and what is wrong with it.
 */
export function parseFaultPlan(value: string): FaultPlan {
  const rates: Partial<Record<FaultPoint, number>> = {};
  let seed = 0;
  for (const item of value.split(',').map((s) => s.trim()).filter((s) => s !== '')) {
    const [key, raw, ...extra] = item.split('=');
    const where = `${FAULTS_ENV} item '${item}'`;
    if (key === undefined || raw === undefined || extra.length > 0) throw new ConfigError(`${where}: expected point=rate or seed=N`);
    const n = Number(raw);
    if (key === 'seed') {
      if (!Number.isSafeInteger(n)) throw new ConfigError(`${where}: the seed must be an integer`);
      seed = n;
    } else if ((FAULT_POINTS as readonly string[]).includes(key)) {
      if (raw.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1) throw new ConfigError(`${where}: the rate must be a number in [0, 1]`);
      rates[key as FaultPoint] = n;
    } else {
      throw new ConfigError(`${where}: unknown fault point '${key}' (known: ${FAULT_POINTS.join(', ')})`);
    }
  }
  return { rates, seed };
}

/**
 * Turns fault injection on for this process from `env[GYMFLOW_FAULTS]`, or off when it is unset or empty.
 * Workers call it once at start; returns the plan it installed, so the worker can say so in its log.
 * The draws are seeded by the plan's seed and this process's id: a restarted worker draws afresh.
 */
export function installFaultsFromEnv(env: NodeJS.ProcessEnv = process.env): FaultPlan | undefined {
  const value = env[FAULTS_ENV];
  if (value === undefined || value.trim() === '') {
    active = undefined;
    return undefined;
  }
  const plan = parseFaultPlan(value);
  active = { plan, rng: new Rng(mixSeed(plan.seed, process.pid)), counts: new Map() };
  return plan;
}

/** Turns fault injection off (tests). */
export function clearFaults(): void {
  active = undefined;
}

/** Throws an {@link InjectedFault} at `point` with the installed rate; a no-op unless faults are installed. */
export function injectFault(point: FaultPoint): void {
  if (active === undefined) return;
  const rate = active.plan.rates[point] ?? 0;
  const count = active.counts.get(point) ?? { calls: 0, injected: 0 };
  active.counts.set(point, count);
  count.calls++;
  if (rate > 0 && active.rng.next() < rate) {
    count.injected++;
    throw new InjectedFault(point);
  }
}

/** Calls and injected faults per point since {@link installFaultsFromEnv} (empty when off). */
export function faultCounts(): Partial<Record<FaultPoint, { calls: number; injected: number }>> {
  return Object.fromEntries(active?.counts ?? []);
}

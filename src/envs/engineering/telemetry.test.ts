import { describe, expect, it } from 'vitest';
import { initialState } from './actions.js';
import type { FaultKind } from './fleet.js';
import { type EngineeringTask, listEngineeringTasks } from './tasks.js';
import { healthProblems, logTail, type MetricName, metricAt } from './telemetry.js';

const tasks = listEngineeringTasks('train');
const ofKind = (kind: FaultKind, extra: (t: EngineeringTask) => boolean = () => true): EngineeringTask => tasks.find((t) => t.kind === kind && extra(t)) as EngineeringTask;
const culpritIndex = (t: EngineeringTask): number => t.incident.services.findIndex((s) => s.name === t.incident.fault.service);

/** The metric of the faulty service before the fault (its onset − 20) and now. */
function beforeAndNow(t: EngineeringTask, metric: MetricName): [number, number] {
  const state = initialState(t);
  const i = culpritIndex(t);
  return [metricAt(t.incident, t.seed, state, i, metric, t.incident.fault.onset - 50), metricAt(t.incident, t.seed, state, i, metric, 0)];
}

describe('fleet telemetry', () => {
  it("shows each fault's signature on the faulty service, and only after it began (or, for a leak or a full disk, as it built up)", () => {
    const [e0, e1] = beforeAndNow(ofKind('bad_deploy'), 'error_rate');
    expect(e0).toBeLessThan(1);
    expect(e1).toBeGreaterThan(8);
    const [c0, c1] = beforeAndNow(ofKind('saturated_dependency'), 'cpu_pct');
    expect(c0).toBeLessThan(60);
    expect(c1).toBeGreaterThan(95);
    const [d0, d1] = beforeAndNow(ofKind('disk_full'), 'disk_pct');
    expect(d0).toBeLessThan(70);
    expect(d1).toBeGreaterThan(95);
    const leak = ofKind('connection_leak');
    const [p0, p1] = beforeAndNow(leak, 'db_connections');
    expect(p1).toBe(Number(leak.incident.services[culpritIndex(leak)]?.config.db_pool_size));
    expect(p0).toBeLessThan(p1 / 2);
  });

  it('spreads errors to the callers, weaker with each hop, and leaves services the fault does not reach healthy', () => {
    for (const t of tasks.slice(0, 60)) {
      const state = initialState(t);
      const inc = t.incident;
      inc.services.forEach((s, i) => {
        const hops = inc.reach[s.name];
        const problems = healthProblems(inc, t.seed, state, i);
        if (hops === undefined) expect(problems, `${t.id} ${s.name}`).toEqual([]);
        if (hops === 0) expect(problems.length, `${t.id} ${s.name}`).toBeGreaterThan(0);
      });
    }
  });

  it('writes logs with noise, the fault on the faulty service and upstream errors on its callers; the same read twice reads the same', () => {
    const t = ofKind('bad_deploy', (x) => x.incident.symptom !== x.incident.fault.service);
    const state = initialState(t);
    const own = logTail(t.incident, t.seed, state, culpritIndex(t), 40);
    expect(own).toHaveLength(40);
    expect(own).toEqual(logTail(t.incident, t.seed, state, culpritIndex(t), 40));
    expect(own.some((l) => / ERROR .*\[build v/.test(l))).toBe(true);
    expect(own.some((l) => / INFO /.test(l))).toBe(true);
    expect(own.every((l) => /^\d\d:\d\d:\d\d (DEBUG|INFO|WARN|ERROR|LOG) /.test(l))).toBe(true);
    const caller = t.incident.services.findIndex((s) => s.name === t.incident.symptom);
    expect(logTail(t.incident, t.seed, state, caller, 60).some((l) => /ERROR call to \w+ failed: HTTP 5\d\d/.test(l))).toBe(true);
  });
});

describe('telemetry across tasks', () => {
  it('draws each task and service its own noise: no two share their log lines', () => {
    const seen = new Map<string, string>();
    for (const t of listEngineeringTasks('heldout')) {
      // An hour before the page: only noise (no fault has begun; a rare deploy or reload line just adds to it).
      const state = { ...initialState(t), now: -100 };
      t.incident.services.forEach((s, i) => {
        if (s.tier !== 'app') return;
        // Lines with the service's names and paths masked, so two services with the same draws would compare equal.
        const key = logTail(t.incident, t.seed, state, i, 8).map((l) => l.slice(6).replace(/\/[\w/.:-]*/g, 'PATH').replace(/call to \w+/g, 'call to DEP')).join('|');
        expect(seen.get(key), `${t.id} ${s.name} repeats ${seen.get(key)}`).toBeUndefined();
        seen.set(key, `${t.id} ${s.name}`);
      });
    }
    expect(seen.size).toBeGreaterThan(100);
  });
});

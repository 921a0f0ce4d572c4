import { describe, expect, it } from 'vitest';
import type { Action } from '../../core/types.js';
import { fleetHealthy, FleetToolError, initialState, runFleetTool, unhealthyServices } from './actions.js';
import type { FaultKind } from './fleet.js';
import { type EngineeringTask, listEngineeringTasks } from './tasks.js';

const tasks = listEngineeringTasks('train');
const ofKind = (kind: FaultKind): EngineeringTask => tasks.find((t) => t.kind === kind) as EngineeringTask;

/** The remedy of a task's fault. */
function remedy(t: EngineeringTask): Action {
  const f = t.incident.fault;
  const service = f.service;
  switch (f.kind) {
    case 'bad_deploy':
      return { tool: 'rollback', params: { service } };
    case 'config_change':
      return { tool: 'edit_config', params: { service, key: f.change?.key, value: f.change?.from } };
    case 'saturated_dependency':
      return { tool: 'scale', params: { service, replicas: f.replicasNeeded } };
    default:
      return { tool: 'restart', params: { service } };
  }
}

describe('fleet tools', () => {
  it('fixes every fault with its remedy: the fleet is healthy five minutes later', () => {
    for (const t of tasks) {
      const state = initialState(t);
      expect(fleetHealthy(t, state), t.id).toBe(false);
      expect(unhealthyServices(t, state)).toContain(t.incident.fault.service);
      const r = runFleetTool(t, state, remedy(t));
      expect(r.harm, t.id).toBeUndefined();
      expect(state.now).toBe(5);
      expect(unhealthyServices(t, state), t.id).toEqual([]);
    }
  });

  it('does not fix a fault with another remedy, or with too little of the right one', () => {
    const deploy = ofKind('bad_deploy');
    const s1 = initialState(deploy);
    expect(runFleetTool(deploy, s1, { tool: 'restart', params: { service: deploy.incident.fault.service } }).harm).toBeUndefined();
    expect(fleetHealthy(deploy, s1)).toBe(false);
    const sat = ofKind('saturated_dependency');
    const s2 = initialState(sat);
    const replicas = (sat.incident.fault.replicasNeeded as number) - 1;
    runFleetTool(sat, s2, { tool: 'scale', params: { service: sat.incident.fault.service, replicas } });
    expect(fleetHealthy(sat, s2)).toBe(false);
    const config = ofKind('config_change');
    const s3 = initialState(config);
    const r = runFleetTool(config, s3, { tool: 'edit_config', params: { service: config.incident.fault.service, key: config.incident.fault.change?.key, value: '12345' } });
    expect(r.harm?.why).toMatch(/not back to its previous value/);
    expect(fleetHealthy(config, s3)).toBe(false);
  });

  it('calls a change to what the evidence does not implicate harmful', () => {
    const t = ofKind('disk_full');
    const state = initialState(t);
    const innocent = t.incident.services.find((s) => t.incident.reach[s.name] === undefined && s.tier !== 'data') ?? t.incident.services.find((s) => s.name !== t.incident.fault.service);
    const other = innocent?.name as string;
    expect(runFleetTool(t, state, { tool: 'restart', params: { service: other } }).harm).toEqual({ tool: 'restart', service: other, why: `restarted ${other}, which was not at fault` });
    expect(runFleetTool(t, state, { tool: 'scale', params: { service: other, replicas: 30 } }).harm).toBeUndefined();
    expect(runFleetTool(t, state, { tool: 'scale', params: { service: other, replicas: 1 } }).harm?.why).toMatch(/scaled .* down/);
    expect(runFleetTool(t, state, { tool: 'edit_config', params: { service: other, key: 'log_level', value: 'debug' } }).harm?.why).toMatch(/did not cause the incident/);
    const deployed = t.incident.deploys.find((d) => d.service !== t.incident.fault.service);
    if (deployed) expect(runFleetTool(t, state, { tool: 'rollback', params: { service: deployed.service } }).harm?.why).toMatch(/did not cause the incident/);
  });

  it('refuses unknown services and keys and a second rollback, changing nothing', () => {
    const t = ofKind('bad_deploy');
    const state = initialState(t);
    expect(() => runFleetTool(t, state, { tool: 'read_logs', params: { service: 'mainframe' } })).toThrow(/no service 'mainframe' in this fleet; services: gateway, /);
    expect(() => runFleetTool(t, state, { tool: 'edit_config', params: { service: 'gateway', key: 'nope', value: '1' } })).toThrow(FleetToolError);
    expect(() => runFleetTool(t, state, { tool: 'query_metrics', params: { service: 'gateway', metric: 'error_rate', window: '5000m' } })).toThrow(/out of range/);
    runFleetTool(t, state, { tool: 'rollback', params: { service: t.incident.fault.service } });
    expect(() => runFleetTool(t, state, { tool: 'rollback', params: { service: t.incident.fault.service } })).toThrow(/no earlier version/);
    expect(state.now).toBe(5);
  });
});

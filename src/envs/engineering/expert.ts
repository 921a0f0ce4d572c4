import type { Action, TaskInfo } from '../../core/types.js';
import { ExpertFailed, ScriptedExpert, type Script } from '../shared/scripted-expert.js';
import type { ServiceSpec } from './incident.js';
import { getEngineeringTask, type EngineeringTask } from './tasks.js';
import { clockTime, type MetricName } from './telemetry.js';
import { RESOLVE_TOOL } from './tools.js';

/**
 * The expert of `gymflow/engineering-v0`: an on-call engineer who follows the runbook. It knows the task's fault
 * (from the task bank, as the household planner knows the house) and walks the investigation an engineer would to
 * find it: it acknowledges the page and asks the commander when it started and what customers see, lists the
 * services, reads the logs of the service the commander named and of the faulty one, reads the metric that shows
 * the fault, lists the recent changes (and reads the config for a config fault), then posts an update naming the
 * cause and the one change it proposes and asks for approval, applies it, checks that every service is healthy
 * again, tells the commander and resolves with `'<service>: <kind>'`. Its demonstrations therefore show the
 * diagnosis an agent has to learn, and never a harmful change.
 */

const say = (content: string): Action => ({ tool: 'respond', params: { content } });

/** The metric that shows each fault on the faulty service. */
const SIGNATURE: Readonly<Record<EngineeringTask['kind'], MetricName>> = {
  bad_deploy: 'error_rate',
  config_change: 'error_rate',
  saturated_dependency: 'cpu_pct',
  disk_full: 'disk_pct',
  connection_leak: 'db_connections',
};

function* solve(task: EngineeringTask): Script {
  const inc = task.incident;
  const f = inc.fault;
  const s = inc.services.find((x) => x.name === f.service) as ServiceSpec;
  const at = clockTime(inc, f.onset);

  yield say(`Hi ${task.commander}, I'm on it and will keep you posted. When did the first alert fire, and what are customers seeing?`);
  yield { tool: 'list_services', params: {} };
  if (inc.symptom !== s.name) yield { tool: 'read_logs', params: { service: inc.symptom, lines: 30 } };
  yield { tool: 'read_logs', params: { service: s.name, lines: 30 } };
  yield { tool: 'query_metrics', params: { service: s.name, metric: SIGNATURE[f.kind], window: '60m' } };
  yield { tool: 'list_changes', params: {} };

  let finding: string;
  let plan: string;
  let action: Action;
  let done: string;
  switch (f.kind) {
    case 'bad_deploy': {
      const d = f.deploy;
      if (!d) throw new ExpertFailed('engineering expert: a bad-deploy fault without its deploy');
      finding = `${s.name} has been failing since its deploy of ${d.to} at ${at} UTC: its logs show exceptions from build ${d.to}, and its callers get 5xx from it`;
      plan = `roll back ${s.name} from ${d.to} to ${d.from}`;
      action = { tool: 'rollback', params: { service: s.name } };
      done = `${s.name} is rolled back to ${d.from}`;
      break;
    }
    case 'config_change': {
      const c = f.change;
      if (!c) throw new ExpertFailed('engineering expert: a config fault without its change');
      yield { tool: 'read_config', params: { service: s.name } };
      finding = `${s.name} started failing at ${at} UTC, when its ${c.key} was changed from ${c.from} to ${c.to}`;
      plan = `set ${s.name} ${c.key} back to ${c.from}`;
      action = { tool: 'edit_config', params: { service: s.name, key: c.key, value: c.from } };
      done = `${s.name} ${c.key} is back to ${c.from}`;
      break;
    }
    case 'saturated_dependency': {
      const to = f.replicasNeeded ?? s.replicas * 2;
      finding = `${s.name} is saturated: its CPU is pinned near 100% and its latency is up tenfold since ${at} UTC, so the services that call it time out`;
      plan = `scale ${s.name} from ${s.replicas} to ${to} replicas`;
      action = { tool: 'scale', params: { service: s.name, replicas: to } };
      done = `${s.name} runs ${to} replicas`;
      break;
    }
    case 'disk_full':
      finding = `${s.name}'s disk filled up: writes fail with "No space left on device" since ${at} UTC`;
      plan = `restart ${s.name}, which clears its spool of temporary files`;
      action = { tool: 'restart', params: { service: s.name } };
      done = `${s.name} is restarted and its disk has room again`;
      break;
    case 'connection_leak':
      finding = `${s.name} is leaking database connections: its pool has been exhausted since ${at} UTC, though postgres itself is fine`;
      plan = `restart ${s.name} to close the leaked connections`;
      action = { tool: 'restart', params: { service: s.name } };
      done = `${s.name} is restarted and its pool is back to normal`;
      break;
  }

  yield say(`Update: ${finding}. I propose to ${plan}. Shall I proceed?`);
  const result = yield action;
  if (result.startsWith('Error') || result.startsWith('Refused')) throw new ExpertFailed(`engineering expert: ${action.tool} failed: ${result}`);
  const fleet = yield { tool: 'list_services', params: {} };
  if (fleet.includes('DEGRADED')) throw new ExpertFailed(`engineering expert: the fleet is still degraded after ${action.tool}`);
  yield say(`Done: ${done}. Every service passes its health check again.`);
  yield {
    tool: RESOLVE_TOOL,
    params: { root_cause: `${s.name}: ${f.kind}`, summary: `${finding[0]?.toUpperCase()}${finding.slice(1)}. Fixed: ${done}.` },
  };
}

/** The expert agent for `gymflow/engineering-v0` (see the module comment). */
export class EngineeringExpert extends ScriptedExpert {
  constructor() {
    // An unknown task id, or a plan that fails, makes the agent resolve without a cause, giving up.
    super({ name: 'engineering-expert' }, { tool: RESOLVE_TOOL, params: { root_cause: 'unknown', summary: 'I could not find the cause.' } });
  }

  /** The plan for the task. */
  protected start(task: TaskInfo): Script {
    return solve(getEngineeringTask(task.id));
  }
}

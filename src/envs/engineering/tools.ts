import type { JsonSchema, ToolSpec } from '../../core/types.js';
import { RESPOND_TOOL } from '../conversation-kit/respond-tool.js';
import { strictTool, textParam } from '../shared/tool-spec.js';
import { METRICS } from './telemetry.js';

/** The tools of `gymflow/engineering-v0`: investigate (read), act on the fleet (write), talk, resolve. */

const SERVICE = textParam("A service of the fleet, as list_services names it, e.g. 'checkout'.");

/** The tools that change the fleet: each needs the incident commander's approval first. */
export const REMEDIATION_TOOLS = ['rollback', 'restart', 'scale', 'edit_config'] as const;

/** A remediation tool. */
export type RemediationTool = (typeof REMEDIATION_TOOLS)[number];

/** The tool that ends the episode. */
export const RESOLVE_TOOL = 'resolve';

function optional(name: string, description: string, properties: Record<string, JsonSchema>, required: string[]): ToolSpec {
  return { name, description, category: 'read', parameters: { type: 'object', properties, required, additionalProperties: false } };
}

/** The tools, in the order they are offered. */
export const ENGINEERING_TOOLS: readonly ToolSpec[] = [
  RESPOND_TOOL,
  strictTool('list_services', "List the fleet's services: tier, replicas, version, what each calls, and its health check (ok, or degraded with why).", 'read', {}),
  optional('read_logs', "Read a service's most recent log lines (default 30), oldest first.", { service: SERVICE, lines: { type: 'integer', minimum: 1, maximum: 200, description: 'How many lines (1-200, default 30).' } }, ['service']),
  optional(
    'query_metrics',
    "Read one metric of a service over a time window, one point per 5 minutes up to now. db_connections is the database pool's connections in use (services that use postgres).",
    {
      service: SERVICE,
      metric: { type: 'string', enum: [...METRICS], description: 'The metric.' },
      window: { type: 'string', pattern: '^[0-9]+m$', description: "How far back, in minutes: '15m' to '180m' (default '60m')." },
    },
    ['service', 'metric'],
  ),
  optional('list_changes', 'List the recent deploys and config changes (time, service, what changed), of one service or of the whole fleet.', { service: SERVICE }, []),
  strictTool('read_config', "Read a service's current configuration (key = value).", 'read', { service: SERVICE }),
  strictTool('rollback', "Roll a service back to the version before its latest deploy. Needs the incident commander's approval.", 'write', { service: SERVICE }),
  strictTool('restart', "Restart every replica of a service (clears its local state: temporary files, connections, caches). Needs the incident commander's approval.", 'write', { service: SERVICE }),
  strictTool('scale', "Set a service's number of replicas. Needs the incident commander's approval.", 'write', {
    service: SERVICE,
    replicas: { type: 'integer', minimum: 1, maximum: 64, description: 'The new number of replicas.' },
  }),
  strictTool('edit_config', "Set a configuration key of a service (the service reloads it). Needs the incident commander's approval.", 'write', {
    service: SERVICE,
    key: textParam("The key, as read_config shows it, e.g. 'request_timeout_ms'."),
    value: textParam('The new value.'),
  }),
  strictTool('think', 'Think about the next step; changes nothing and tells no one.', 'think', { thought: textParam('The thought.') }),
  strictTool(RESOLVE_TOOL, 'Declare the incident resolved; ends the episode. Call it once the fleet is healthy.', 'submit', {
    root_cause: textParam("The root cause: the faulty service and the kind of fault, e.g. 'checkout: bad_deploy' (kinds: bad_deploy, config_change, saturated_dependency, disk_full, connection_leak)."),
    summary: textParam('What happened and what you did, for the incident report.'),
  }),
];

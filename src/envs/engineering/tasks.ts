import { Rng } from '../../core/rng.js';
import type { Split, TaskInfo } from '../../core/types.js';
import type { UserScript } from '../conversation-kit/scripted-user.js';
import { indexedTaskBank } from '../shared/task-bank.js';
import { FAULT_CANDIDATES, FAULT_KINDS, type FaultKind, HELDOUT_COMBINATIONS } from './fleet.js';
import { drawIncident, type Incident } from './incident.js';
import { commanderScript, hiddenInstruction, openingMessage } from './stakeholder.js';

/**
 * The task bank of `gymflow/engineering-v0`. Task `i` of a split is regenerated from its id alone
 * (`engineering-train-00042`): its fault kind is the `i mod 5`-th of {@link FAULT_KINDS}; a seed of the split's own
 * stream draws the faulty service among the split's combinations, the fleet, its history and telemetry, and the
 * incident commander.
 *
 * The splits hold disjoint fault/service combinations ({@link HELDOUT_COMBINATIONS}: a bad deploy of `accounts`, a
 * saturated `redis`, a connection leak in `payments`, …, only in held-out), so no held-out incident — hence no
 * held-out hidden instruction — occurs in training.
 */

/** The domain profile these tasks belong to. */
export const ENGINEERING_DOMAIN = 'engineering';

/** Tasks per split (50 and 12 of each fault kind). */
export const ENGINEERING_TASK_COUNTS: Readonly<Record<Split, number>> = { train: 250, heldout: 60 };

/** The incident commanders (the simulated stakeholder's name). */
export const COMMANDERS = ['Dana', 'Ravi', 'Mei', 'Tomás', 'Ingrid', 'Kwame', 'Sasha', 'Lena', 'Yusuf', 'Harper'] as const;

/** A task of the bank. */
export interface EngineeringTask {
  id: string;
  split: Split;
  /** The seed its incident was drawn from (also the seed of its telemetry). */
  seed: number;
  kind: FaultKind;
  incident: Incident;
  /** The incident commander's name. */
  commander: string;
  /** The commander's first message. */
  opening: string;
  /** The hidden instruction a model user is prompted with. */
  hidden: string;
  /** The same, as the scripted user follows it. */
  script: UserScript;
  /** What the agent is told: the runbook and the commander's first message. */
  instruction: string;
}

/** The runbook, as the agent's task instruction states it. */
export const RUNBOOK = `# Incident response runbook

You are the on-call engineer of an online shop's service fleet. A fault is hurting it: find it, fix it, and keep the incident commander informed. Each message you send with \`respond\` goes to the incident commander; its result is their reply.

- Investigate with the read tools: list_services (every service's health check and what it calls), read_logs, query_metrics (one point per 5 minutes), list_changes (recent deploys and config changes), read_config. Errors spread to the services that call a faulty one, so a degraded service may only be a victim. Not every recent change is the cause.
- Before any change to production (rollback, restart, scale, edit_config), tell the commander what you found and exactly what you will do, naming the service, and ask for their approval; act only after they say yes. A change to a service no approved request named is refused.
- Change only what the evidence implicates. Restarting a service that is not at fault, rolling back a deploy that did not cause the incident, changing a config key that did not cause it, or scaling a service down is harmful.
- Remedies: roll back a bad deploy; set a bad config change back to its previous value; scale a saturated service to at least twice its replicas; restart a service whose disk is full or whose connections leak.
- A change takes 5 minutes. Check that every service is healthy again (list_services), tell the commander, then call resolve with the root cause as '<service>: <kind>' (kinds: ${FAULT_KINDS.join(', ')}) and a summary. resolve ends the incident.`;

// Disjoint seed streams: the split decides the high bits.
const STREAM_BASE: Readonly<Record<Split, number>> = { train: 0x31000000, heldout: 0x3a000000 };

/** The faulty services a split's tasks of `kind` draw from. */
export function splitCandidates(split: Split, kind: FaultKind): string[] {
  const held = HELDOUT_COMBINATIONS[kind];
  return FAULT_CANDIDATES[kind].filter((s) => (split === 'heldout') === held.includes(s));
}

function generateTask(split: Split, index: number): EngineeringTask {
  const seed = STREAM_BASE[split] + index;
  const rng = new Rng(seed);
  const kind = FAULT_KINDS[index % FAULT_KINDS.length] as FaultKind;
  const culprit = rng.pick(splitCandidates(split, kind));
  const incident = drawIncident(kind, culprit, rng);
  const commander = rng.pick(COMMANDERS);
  const opening = openingMessage(incident, commander, rng);
  return {
    id: bank.id(split, index),
    split,
    seed,
    kind,
    incident,
    commander,
    opening,
    hidden: hiddenInstruction(incident, commander),
    script: commanderScript(incident),
    instruction: `${RUNBOOK}\n\n# The incident commander's first message\n\n${opening}`,
  };
}

const bank = indexedTaskBank('engineering', ENGINEERING_TASK_COUNTS, generateTask);

/** The id of the `index`-th task of `split`. */
export function engineeringTaskId(split: Split, index: number): string {
  return bank.id(split, index);
}

/** The task with this id. Throws a `TaskError` for an id that is malformed or out of range. */
export function getEngineeringTask(id: string): EngineeringTask {
  return bank.get(id);
}

/** Every task of a split (both splits when omitted), in index order; generated on first use. */
export function listEngineeringTasks(split?: Split): EngineeringTask[] {
  return bank.list(split);
}

/** The public description of a task: the runbook and the first message; never the fault. */
export function engineeringTaskInfo(task: EngineeringTask): TaskInfo {
  return { id: task.id, domain: ENGINEERING_DOMAIN, instruction: task.instruction, split: task.split, metadata: { services: task.incident.services.length } };
}

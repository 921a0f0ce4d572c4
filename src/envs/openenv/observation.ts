/**
 * How a gymflow time step and an OpenEnv step result map onto each other.
 *
 * Served gymflow environment → OpenEnv: the observation's fields are `text` (the time step's observation),
 * `terminated`, `truncated` and `info`; `reward` and `done` (= terminated or truncated) are OpenEnv's own.
 *
 * OpenEnv server → gymflow: from a gymflow server, those fields back. From any other: the observation text is the
 * field named by `observationField`, else the observation's only string field, else the observation as JSON;
 * `done` ends the episode as terminated (reason `done`; OpenEnv has no truncation), with `info.score` the last
 * reward clipped to [0, 1] and `info.success` whether it reached `successThreshold`; a null reward is 0. The
 * observation's fields and the raw reward stay in `info.openenv`.
 */
import type { TimeStep } from '../../core/types.js';
import { OpenEnvProtocolError } from './errors.js';
import { GymflowObservationSchema, parseWire, type StepResult } from './protocol.js';

/** The reason of an episode a (non-gymflow) OpenEnv server ended with `done`. */
export const DONE_REASON = 'done';

/** The step result a served gymflow environment answers for a time step. */
export function stepResultOf(ts: TimeStep): StepResult {
  return {
    observation: { text: ts.observation, terminated: ts.terminated, truncated: ts.truncated, info: ts.info },
    reward: ts.reward,
    done: ts.terminated || ts.truncated,
  };
}

/** How {@link timeStepFrom} reads a server's step results. */
export interface ObservationReading {
  /** The server is a gymflow server (`GET /gymflow` answered): its observations carry a whole time step. */
  gymflow: boolean;
  /** A non-gymflow server: the observation field that is the observation text. */
  observationField?: string;
  /** A non-gymflow server: the last reward at or above which an ended episode counts as a success. */
  successThreshold: number;
}

/** The time step of a step result; `place` (server and request) prefixes errors. */
export function timeStepFrom(result: StepResult, reading: ObservationReading, place: string): TimeStep {
  const reward = result.reward === undefined || result.reward === null ? 0 : Number(result.reward);
  if (reading.gymflow) {
    const o = parseWire(GymflowObservationSchema, result.observation, `${place} observation`);
    if (result.done !== (o.terminated || o.truncated)) {
      throw new OpenEnvProtocolError(`${place}: malformed answer: done is ${result.done} but terminated is ${o.terminated} and truncated ${o.truncated}`);
    }
    if (o.terminated && o.truncated) throw new OpenEnvProtocolError(`${place}: malformed answer: terminated and truncated are both true`);
    return { observation: o.text, reward, terminated: o.terminated, truncated: o.truncated, info: o.info };
  }
  const info: Record<string, unknown> = { openenv: { observation: result.observation, reward: result.reward ?? null } };
  if (result.done) {
    Object.assign(info, { reason: DONE_REASON, success: reward >= reading.successThreshold, score: Math.min(1, Math.max(0, reward)) });
  }
  return { observation: observationText(result.observation, reading.observationField, place), reward, terminated: result.done, truncated: false, info };
}

function observationText(observation: Record<string, unknown>, field: string | undefined, place: string): string {
  if (field !== undefined) {
    if (!(field in observation)) {
      throw new OpenEnvProtocolError(`${place}: the observation has no field '${field}' (observationField); its fields: ${Object.keys(observation).join(', ') || '(none)'}`);
    }
    const value = observation[field];
    return typeof value === 'string' ? value : JSON.stringify(value);
  }
  const strings = Object.values(observation).filter((v): v is string => typeof v === 'string');
  return strings.length === 1 ? (strings[0] as string) : JSON.stringify(observation);
}

/**
 * OpenEnv's wire protocol (openenv-core 0.3), as zod schemas: the HTTP answers (`/health`, `/schema`, `/metadata`,
 * `/reset`, `/step`, `/state`), the WebSocket messages of a session (`/ws`), and gymflow's own additions (the
 * observation fields of a served gymflow environment, the `/gymflow` description). Both sides of the bridge
 * validate what they receive with these, so a malformed message is an error naming the field.
 */
import { z } from 'zod';
import { formatZodIssues, TaskSchema } from '../../core/trajectory.js';
import { OpenEnvProtocolError } from './errors.js';

const JsonObject = z.record(z.string(), z.unknown());

/** `GET /health`: `{"status": "healthy"}` (or `unhealthy`, `degraded`). */
export const HealthSchema = z.object({ status: z.string() });

/** `GET /schema`: the JSON Schemas of the action, the observation and the state. */
export const SchemaResponseSchema = z.object({ action: JsonObject, observation: JsonObject, state: JsonObject });
/** The answer of `GET /schema`. */
export type SchemaResponse = z.infer<typeof SchemaResponseSchema>;

/** `GET /metadata`: the environment's name and description (other fields are optional). */
export const MetadataSchema = z.looseObject({
  name: z.string(),
  description: z.string(),
  version: z.string().nullish(),
});
/** The answer of `GET /metadata`. */
export type Metadata = z.infer<typeof MetadataSchema>;

/**
 * What `/reset` and `/step` answer, and the `data` of a WebSocket `observation` message: the observation's own
 * fields (OpenEnv leaves out its `done`, `reward` and `metadata`), the reward (a number, a boolean or null) and
 * whether the episode is over.
 */
export const StepResultSchema = z.object({
  observation: JsonObject,
  reward: z.union([z.number(), z.boolean()]).nullish(),
  done: z.boolean(),
});
/** One answer to a reset or a step. */
export type StepResult = z.infer<typeof StepResultSchema>;

/** The `data` of a WebSocket `error` message. */
export const WsErrorDataSchema = z.looseObject({ message: z.string(), code: z.string().optional() });

/** What a server sends over `/ws`: an envelope whose `data` depends on its `type`. */
export const WsEnvelopeSchema = z.object({ type: z.string(), data: z.unknown() });

/** The server's error codes that OpenEnv defines (`WSErrorCode`). */
export const WS_ERROR_CODES = {
  invalidJson: 'INVALID_JSON',
  unknownType: 'UNKNOWN_TYPE',
  validation: 'VALIDATION_ERROR',
  execution: 'EXECUTION_ERROR',
  capacity: 'CAPACITY_REACHED',
  factory: 'FACTORY_ERROR',
  session: 'SESSION_ERROR',
} as const;

/** What a client sends over `/ws`. Unknown keys are refused, as OpenEnv's server does. */
export const WsRequestSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('reset'), data: JsonObject.default({}) }),
  z.strictObject({ type: z.literal('step'), data: JsonObject }),
  z.strictObject({ type: z.literal('state') }),
  z.strictObject({ type: z.literal('close') }),
]);
/** One message of a client. */
export type WsRequest = z.infer<typeof WsRequestSchema>;

/** The reset parameters a served gymflow environment reads (other keys are ignored, as OpenEnv does). */
export const GymflowResetSchema = z.looseObject({
  seed: z.number().int().nullish(),
  task: z.string().min(1).nullish(),
  episode_id: z.string().max(255).nullish(),
});

/** The observation fields of a served gymflow environment: the time step's text, flags and `info`. */
export const GymflowObservationSchema = z.object({
  text: z.string(),
  terminated: z.boolean(),
  truncated: z.boolean(),
  info: JsonObject,
});

/**
 * `GET /gymflow`, a gymflow server's addition to the protocol: the environment's id, domain, step limit and task
 * lists, so that a gymflow client can evaluate on its held-out tasks. Other OpenEnv servers answer 404.
 */
export const GymflowDescriptionSchema = z.object({
  env_id: z.string().min(1),
  domain: z.string().min(1),
  max_episode_steps: z.number().int().positive().nullable(),
  tasks: z.object({ train: z.array(TaskSchema), heldout: z.array(TaskSchema) }),
});
/** The answer of `GET /gymflow`. */
export type GymflowDescription = z.infer<typeof GymflowDescriptionSchema>;

/**
 * Validates `value` against `schema`; a failure is an {@link OpenEnvProtocolError} whose message starts with
 * `place` (the server and the request) and names each wrong field by its JSON path.
 */
export function parseWire<S extends z.ZodType>(schema: S, value: unknown, place: string): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new OpenEnvProtocolError(`${place}: malformed answer: ${formatZodIssues(result.error, '').map((l) => l.trim()).join('; ')}`);
}

/** Parses JSON text from a server; text that is not JSON is an {@link OpenEnvProtocolError} quoting its start. */
export function parseJsonText(text: string, place: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    const head = text.length > 80 ? `${text.slice(0, 80)}…` : text;
    throw new OpenEnvProtocolError(`${place}: malformed answer: not JSON (${(err as Error).message}): ${JSON.stringify(head)}`);
  }
}

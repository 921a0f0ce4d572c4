/**
 * How gymflow's actions (tool calls) and OpenEnv's actions (one JSON object that follows the server's action schema)
 * map onto each other.
 *
 * Served gymflow environment → OpenEnv: the action is `{"tool": NAME, "params": {...}}`; the action schema is a
 * `oneOf` with one branch per tool (`tool` a constant, `params` the tool's parameter schema, the tool's category
 * under `x-gymflow-category`).
 *
 * OpenEnv server → gymflow: an action schema of that form gives the same tools back. Any other (an OpenEnv
 * `Action` model: an object of fields) gives one tool, `act` by default, whose parameters are the action's fields
 * (less OpenEnv's `metadata`); its params are sent as the action.
 */
import { z } from 'zod';
import type { Action, JsonSchema, ToolCategory, ToolSpec } from '../../core/types.js';
import { TOOL_CATEGORIES } from '../../core/types.js';
import { OpenEnvProtocolError } from './errors.js';

/** The keyword of a tool-call branch that carries the tool's category. */
export const CATEGORY_KEYWORD = 'x-gymflow-category';

/** The name of the one tool of an OpenEnv environment whose actions are plain objects of fields. */
export const DEFAULT_TOOL_NAME = 'act';

const TOOL_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

/**
 * The action schema of a served gymflow environment: `{"tool": NAME, "params": {...}}`, one `oneOf` branch per tool.
 *
 * @example
 * ```ts
 * actionSchemaFor(make('gymflow/text-math-v0').tools).oneOf[1];
 * // { title: 'submit', properties: { tool: { const: 'submit' }, params: { …answer… }, metadata: … }, 'x-gymflow-category': 'submit', … }
 * ```
 */
export function actionSchemaFor(tools: readonly ToolSpec[]): JsonSchema & { oneOf: JsonSchema[] } {
  return {
    title: 'GymflowAction',
    description: 'One tool call, {"tool": NAME, "params": {...}}: NAME and params follow one of these tools.',
    type: 'object',
    oneOf: tools.map((t) => ({
      title: t.name,
      description: t.description,
      type: 'object',
      properties: {
        tool: { const: t.name },
        params: t.parameters,
        metadata: { type: 'object', description: "OpenEnv's action metadata (ignored)." },
      },
      required: ['tool', 'params'],
      additionalProperties: false,
      [CATEGORY_KEYWORD]: t.category,
    })),
  };
}

/** A step's action as a served gymflow environment reads it; `params` may be left out for `{}`. */
export const ToolCallSchema = z.strictObject({
  tool: z.string().min(1),
  params: z.record(z.string(), z.unknown()).default({}),
  metadata: z.record(z.string(), z.unknown()).optional(),
});

/** Options of {@link actionMappingFrom} for an action schema of fields. */
export interface FieldActionOptions {
  /** The name of the one tool. Default {@link DEFAULT_TOOL_NAME}. */
  toolName?: string;
  /**
   * Its category. Default `submit`: it is the only way to act and so the way the episode ends (the terminal tool
   * that `checkEnv` and the domain profiles expect).
   */
  category?: ToolCategory;
  /** The environment's name, for the tool's description when the schema has none. */
  envName: string;
}

/** The tools an OpenEnv server's action schema gives, and how an action is sent. */
export interface ActionMapping {
  tools: ToolSpec[];
  /** `tool-call`: `{tool, params}` is sent as it is (a gymflow server); `fields`: the params are the action. */
  form: 'tool-call' | 'fields';
}

/**
 * The tools of an OpenEnv server, from its action schema (`GET /schema`'s `action`). `place` names the schema in
 * errors. A schema that is neither form is an {@link OpenEnvProtocolError}.
 */
export function actionMappingFrom(schema: JsonSchema, options: FieldActionOptions, place: string): ActionMapping {
  const calls = toolCallBranches(schema);
  if (calls !== undefined) {
    const tools = calls.map((b, i): ToolSpec => {
      const name = (b.properties as { tool: { const: string } }).tool.const;
      if (!TOOL_NAME.test(name)) throw new OpenEnvProtocolError(`${place} $.oneOf[${i}].properties.tool.const: ${JSON.stringify(name)} is not a tool name`);
      const category = b[CATEGORY_KEYWORD];
      return {
        name,
        description: typeof b.description === 'string' ? b.description : '',
        parameters: (b.properties as { params: JsonSchema }).params,
        category: isCategory(category) ? category : 'execute',
      };
    });
    const names = tools.map((t) => t.name);
    const twice = names.find((n, i) => names.indexOf(n) !== i);
    if (twice !== undefined) throw new OpenEnvProtocolError(`${place} $.oneOf: tool '${twice}' appears twice`);
    return { form: 'tool-call', tools };
  }
  if (schema.type !== 'object' && schema.properties === undefined) {
    throw new OpenEnvProtocolError(`${place}: the action schema is not an object schema (type ${JSON.stringify(schema.type)}), so it cannot be a tool's parameters`);
  }
  const name = options.toolName ?? DEFAULT_TOOL_NAME;
  if (!TOOL_NAME.test(name)) throw new OpenEnvProtocolError(`${place}: tool name ${JSON.stringify(name)} is not a tool name`);
  return {
    form: 'fields',
    tools: [
      {
        name,
        description: typeof schema.description === 'string' && schema.description.trim() !== '' ? schema.description : `Act in the OpenEnv environment '${options.envName}'.`,
        parameters: withoutMetadata(schema),
        category: options.category ?? 'submit',
      },
    ],
  };
}

/** The JSON object a step sends for `action` (already checked against the tool's schema). */
export function actionPayload(mapping: ActionMapping, action: Action): Record<string, unknown> {
  return mapping.form === 'tool-call' ? { tool: action.tool, params: action.params } : { ...action.params };
}

/** The branches of a tool-call action schema, or undefined when the schema is not one. */
function toolCallBranches(schema: JsonSchema): JsonSchema[] | undefined {
  const branches = schema.oneOf ?? schema.anyOf;
  if (!Array.isArray(branches) || branches.length === 0) return undefined;
  const all = branches.every((b: unknown) => {
    if (b === null || typeof b !== 'object') return false;
    const props = (b as JsonSchema).properties as Record<string, JsonSchema> | undefined;
    const params = props?.params;
    return typeof props?.tool?.const === 'string' && params !== undefined && params !== null && typeof params === 'object';
  });
  return all ? (branches as JsonSchema[]) : undefined;
}

/** The action schema as a tool's parameters: OpenEnv's `metadata` field left out (the agent has nothing to put there). */
function withoutMetadata(schema: JsonSchema): JsonSchema {
  const props = { ...((schema.properties as Record<string, unknown> | undefined) ?? {}) };
  delete props.metadata;
  const out: JsonSchema = { ...schema, type: 'object', properties: props };
  if (Array.isArray(schema.required)) out.required = (schema.required as unknown[]).filter((r) => r !== 'metadata');
  return out;
}

function isCategory(v: unknown): v is ToolCategory {
  return typeof v === 'string' && (TOOL_CATEGORIES as readonly string[]).includes(v);
}

import { createRequire } from 'node:module';
import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import type { Action, ActionErrorInfo, ToolSpec } from './types.js';

// Compiling a schema costs milliseconds; environments are built once per rollout worker, so compiled
// validators are shared process-wide, keyed by the schema's JSON text (compiled validators are pure).
// Ajv itself (loading it, compiling its meta-schema) is made at the first compile: listing environments
// (`gymflow envs`) builds them without stepping them and does not pay for it.
let sharedAjv: Ajv | undefined;
const compiled = new Map<string, ValidateFunction>();
const require = createRequire(import.meta.url);

function compile(schema: ToolSpec['parameters']): ValidateFunction {
  const key = JSON.stringify(schema);
  let fn = compiled.get(key);
  if (!fn) {
    sharedAjv ??= new (require('ajv') as typeof import('ajv')).Ajv({ allErrors: true, strict: false });
    fn = sharedAjv.compile(schema);
    compiled.set(key, fn);
  }
  return fn;
}

/**
 * What is wrong with a tool's parameters schema (`undefined` when it is a JSON Schema Ajv compiles): a type
 * that does not exist (`"objekt"`), a keyword of the wrong shape. Environments compile their tools' schemas
 * at their first step, so a profile check runs this first.
 */
export function toolSchemaProblem(schema: ToolSpec['parameters']): string | undefined {
  try {
    compile(schema);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/**
 * Checks actions against a tool set: the tool must exist and its params must satisfy the tool's JSON
 * Schema. Each distinct schema is compiled once per process.
 */
export class ToolValidator {
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly names: string[];

  constructor(tools: readonly ToolSpec[]) {
    for (const tool of tools) this.validators.set(tool.name, compile(tool.parameters));
    this.names = tools.map((t) => t.name);
  }

  /** `undefined` when the action is valid, otherwise what is wrong with it. */
  check(action: Action): ActionErrorInfo | undefined {
    if (action === null || typeof action !== 'object' || typeof action.tool !== 'string') {
      return { code: 'invalid_params', message: 'action must be an object { tool: string, params: object }' };
    }
    const validate = this.validators.get(action.tool);
    if (!validate) {
      return {
        code: 'unknown_tool',
        message: `unknown tool '${action.tool}'; available tools: ${this.names.join(', ')}`,
      };
    }
    const params: unknown = action.params ?? {};
    if (validate(params)) return undefined;
    return {
      code: 'invalid_params',
      message: `invalid params for tool '${action.tool}': ${formatAjvErrors(validate.errors ?? [])}`,
    };
  }
}

/** Ajv errors as one readable line: `params.expression: must be string; params: must have required property 'x'`. */
export function formatAjvErrors(errors: readonly ErrorObject[]): string {
  return errors
    .map((e) => {
      const path = `params${e.instancePath.replace(/\//g, '.')}`;
      const extra =
        e.keyword === 'additionalProperties'
          ? ` '${String((e.params as { additionalProperty?: string }).additionalProperty)}'`
          : '';
      return `${path}: ${e.message ?? 'is invalid'}${extra}`;
    })
    .join('; ');
}

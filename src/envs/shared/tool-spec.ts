import type { JsonSchema, ToolSpec } from '../../core/types.js';

/** A non-empty string parameter with its description. */
export const textParam = (description: string): JsonSchema => ({ type: 'string', minLength: 1, description });

/** A tool whose parameters are all required and no others allowed (the tools of the generated text worlds). */
export function strictTool(name: string, description: string, category: ToolSpec['category'], properties: Record<string, JsonSchema>): ToolSpec {
  return {
    name,
    description,
    category,
    parameters: { type: 'object', properties, required: Object.keys(properties), additionalProperties: false },
  };
}

/**
 * The `think` tool: a scratchpad call with one required string `thought`, which the environment ignores.
 * `description` says what it does not do in that environment (not graded, no reward).
 */
export function thinkTool(description: string): ToolSpec {
  return {
    name: 'think',
    description,
    category: 'think',
    parameters: {
      type: 'object',
      properties: { thought: { type: 'string', description: 'Your working.' } },
      required: ['thought'],
      additionalProperties: false,
    },
  };
}

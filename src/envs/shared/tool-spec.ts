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

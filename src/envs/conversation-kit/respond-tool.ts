import type { ToolSpec } from '../../core/types.js';

/** The name of the tool that sends a message to the user (tau-bench's `respond`, the generic profile's). */
export const RESPOND_TOOL_NAME = 'respond';

/**
 * The `respond` tool: the agent's message to the user, whose reply is the next observation. Its one
 * parameter is `content`, as in tau-bench and as the recorder writes an assistant turn without a tool call,
 * so converted chat logs and this env's trajectories share the action.
 */
export const RESPOND_TOOL: ToolSpec = {
  name: RESPOND_TOOL_NAME,
  description: "Send a message to the user and wait for the reply (the reply is this tool's result). One message per call; do not call another tool in the same turn.",
  category: 'communicate',
  parameters: {
    type: 'object',
    properties: { content: { type: 'string', minLength: 1, description: 'The message to the user.' } },
    required: ['content'],
    additionalProperties: false,
  },
};

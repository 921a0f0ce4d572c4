import type { LogAdapter } from './adapter.js';
import { anthropicMessagesAdapter } from './adapters/anthropic-messages.js';
import { claudeCodeAdapter } from './adapters/claude-code.js';
import { gymflowAdapter } from './adapters/gymflow.js';
import { miniSweAgentAdapter } from './adapters/mini-swe-agent.js';
import { openAiChatAdapter } from './adapters/openai-chat.js';
import { openHandsEventsAdapter } from './adapters/openhands-events.js';
import { openHandsResolverAdapter } from './adapters/openhands-resolver.js';
import { openHandsV1Adapter } from './adapters/openhands-v1.js';
import { sweAgentAdapter } from './adapters/swe-agent.js';
import { verifiersAdapter } from './adapters/verifiers.js';

/**
 * The adapters gymflow knows, in detection tie-break order (earlier wins a tie). Adding a format means
 * writing an adapter and listing it here; nothing else changes.
 */
export const ADAPTERS: readonly LogAdapter[] = [
  gymflowAdapter,
  sweAgentAdapter,
  miniSweAgentAdapter,
  openHandsEventsAdapter,
  openHandsResolverAdapter,
  openHandsV1Adapter,
  claudeCodeAdapter,
  verifiersAdapter,
  openAiChatAdapter,
  anthropicMessagesAdapter,
];

/** The adapter named `name`, or undefined. */
export function getAdapter(name: string): LogAdapter | undefined {
  return ADAPTERS.find((a) => a.name === name);
}

/** The names `--format` accepts. */
export function adapterNames(): string[] {
  return ADAPTERS.map((a) => a.name);
}

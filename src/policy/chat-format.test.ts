import { beforeAll, describe, expect, it } from 'vitest';
import type { AgentContext } from '../core/agent.js';
import { make } from '../core/registry.js';
import { runEpisode } from '../core/rollout.js';
import { registerBuiltinEnvs } from '../envs/register.js';
import { registryToolLookup, renderConversation } from '../hub/export/conversation.js';
import { renderContext } from './chat-format.js';
import { resolveAgent } from './specs.js';
import { invalidCall } from './tool-call-parsing.js';

const ENV = 'gymflow/tool-use-v0';
beforeAll(() => registerBuiltinEnvs());

describe('renderContext', () => {
  it('renders the conversation so far exactly as the exports render the trajectory', async () => {
    const env = make(ENV);
    const t = await runEpisode(env, resolveAgent('expert', ENV), { envId: ENV, seed: 4 });
    t.steps.forEach((s, i) => {
      if (i % 2 === 0) s.thought = `  thought ${i}\n`;
    });
    const conv = renderConversation(t, registryToolLookup());
    // The context before the last step: every earlier step with its observation.
    const k = t.steps.length - 1;
    const ctx: AgentContext = {
      task: { id: t.task.id, domain: t.task.domain, instruction: t.task.instruction },
      tools: env.tools,
      observation: t.steps[k - 1]?.observation ?? '',
      history: t.steps.slice(0, k).map((s) => ({ action: s.action, observation: s.observation, info: {} })),
      stepIndex: k,
    };
    const r = renderContext(ENV, ctx, t.steps.map((s) => (s.thought !== undefined ? { thought: s.thought } : undefined)));
    expect(r.system).toBe(conv.prompt[0]?.content);
    expect(r.user).toBe(conv.prompt[1]?.content);
    r.steps.forEach((s, i) => {
      const assistant = conv.turns[2 * i];
      const tool = conv.turns[2 * i + 1];
      expect(s.assistantText).toBe(assistant?.content);
      expect(s.thought).toBe(assistant?.thought);
      expect(s.callId).toBe(assistant?.tool_calls?.[0]?.id);
      expect(s.argumentsJson).toBe(assistant?.tool_calls?.[0]?.function.arguments);
      expect(s.result).toBe(tool?.content);
      expect(s.callId).toBe(tool?.tool_call_id);
    });
    await env.close();
  });

  it('replays an invalid call as the raw output and explains the error', () => {
    const action = invalidCall('the tool call is not valid JSON', '<tool_call>{bad</tool_call>');
    const ctx: AgentContext = {
      task: { id: 't', domain: 'd', instruction: 'do it' },
      tools: [],
      observation: 'Error: unknown tool',
      history: [{ action, observation: 'Error: unknown tool', info: {} }],
      stepIndex: 1,
    };
    const [s] = renderContext(ENV, ctx).steps;
    expect(s?.invalid).toBe(true);
    expect(s?.assistantText).toBe('<tool_call>{bad</tool_call>');
    expect(s?.result).toBe('Error: your tool call could not be parsed: the tool call is not valid JSON\nError: unknown tool');
  });
});

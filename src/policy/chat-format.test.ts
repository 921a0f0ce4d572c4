import { beforeAll, describe, expect, it } from 'vitest';
import type { AgentContext } from '../core/agent.js';
import { make } from '../core/registry.js';
import { runEpisode } from '../core/rollout.js';
import { registerBuiltinEnvs } from '../envs/register.js';
import { renderChatML } from '../core/chat/chatml.js';
import { registryToolLookup } from '../core/chat/tool-lookup.js';
import { renderConversation } from '../hub/export/conversation.js';
import { contextMessages, contextPrompt, type RenderedContext, renderContext } from './chat-format.js';
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

describe('contextPrompt', () => {
  it('is system, user, then assistant + tool per step, then the generation prompt', () => {
    const step = { index: 0, callId: 'call_0', action: { tool: 't', params: {} }, thought: '', invalid: false, argumentsJson: '{}' };
    const r: RenderedContext = {
      system: 'sys',
      user: 'task',
      steps: [
        { ...step, assistantText: 'a0', result: 'r0' },
        { ...step, index: 1, callId: 'call_1', assistantText: 'a1', result: 'r1' },
      ],
    };
    expect(contextMessages(r).map((m) => `${m.role}:${m.content}`)).toEqual(['system:sys', 'user:task', 'assistant:a0', 'tool:r0', 'assistant:a1', 'tool:r1']);
    expect(contextPrompt(r)).toBe(renderChatML(contextMessages(r), true));
    expect(contextPrompt(r).endsWith('<|im_start|>tool\nr1<|im_end|>\n<|im_start|>assistant\n')).toBe(true);
    // a model trained with system_prompt: drop sees the same prompt without the system message
    expect(contextPrompt(r, { system: 'drop' })).toBe(contextPrompt(r).slice(renderChatML([{ role: 'system', content: 'sys' }], false).length));
    expect(contextPrompt(r, { system: 'drop' }).startsWith('<|im_start|>user\ntask<|im_end|>\n')).toBe(true);
  });
});

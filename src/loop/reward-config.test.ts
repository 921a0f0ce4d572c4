import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parsePipelineConfig, rewardLayers, rulesEnabled } from './config.js';
import { loadPipelineConfig } from '../runtime/config-file.js';
import { judgeNote } from './status.js';

const BASE = { name: 'r', env: 'gymflow/tool-use-v0', policy: { init: { tiny: {} } }, train: { command: 'sft' }, max_iterations: 1 };

function parse(reward: unknown) {
  return parsePipelineConfig({ ...BASE, reward }, 'test');
}

describe('the reward section', () => {
  it('parses an old section exactly as before: no new field appears', () => {
    expect(parsePipelineConfig(BASE, 'test').reward).toEqual({ enabled: true, concurrency: 8 });
    expect(parse({ enabled: false }).reward).toEqual({ enabled: false, concurrency: 8 });
    expect(parse({ profile: 'coding', concurrency: 2 }).reward).toEqual({ enabled: true, profile: 'coding', concurrency: 2 });
    expect(rewardLayers(parse({}).reward)).toEqual(['rules']);
    expect(rulesEnabled(parse({ enabled: false }).reward)).toBe(false);
  });

  it('takes every layer, with the judge\'s defaults filled in', () => {
    const r = parse({
      rules: true,
      judge: { provider: 'openai', model: 'qwen', base_url: 'http://gpu:8000/v1', api_key_env: 'VLLM_KEY', rubrics: [{ name: 'goalProgress', weight: 0.3 }], budget: { calls: 500, tokens: 1_000_000 } },
      calibration: { path: 'cal.json' },
      learned: { path: 'rm/' },
    }).reward;
    expect(r.judge).toEqual({
      provider: 'openai',
      model: 'qwen',
      base_url: 'http://gpu:8000/v1',
      api_key_env: 'VLLM_KEY',
      rubrics: [{ name: 'goalProgress', weight: 0.3 }],
      budget: { calls: 500, tokens: 1_000_000 },
      concurrency: 8,
      timeout: '60s',
      max_retries: 4,
      temperature: 0,
      max_tokens: 1024,
    });
    expect(r.learned).toEqual({ path: 'rm/', weight: 0.2 });
    expect(rewardLayers(r)).toEqual(['rules', 'judge', 'learned', 'calibration']);
  });

  it('names the field of every problem, with the line in a file', async () => {
    const bad = (reward: unknown) => () => parse(reward);
    expect(bad({ judge: { provider: 'gemini', model: 'm' } })).toThrow(/test \$\.reward\.judge\.provider: .*anthropic.*openai/);
    expect(bad({ judge: { provider: 'openai' } })).toThrow(/\$\.reward\.judge\.model: /);
    expect(bad({ judge: { provider: 'openai', model: 'm', base_url: 'gpu:8000' } })).toThrow(/\$\.reward\.judge\.base_url: expected an http/);
    expect(bad({ judge: { provider: 'openai', model: 'm', api_key: 'sk-secret' } })).toThrow(/\$\.reward\.judge: Unrecognized key: "api_key"/);
    expect(bad({ judge: { provider: 'openai', model: 'm', budget: { calls: 0 } } })).toThrow(/\$\.reward\.judge\.budget\.calls: /);
    expect(bad({ judge: { provider: 'openai', model: 'm', rubrics: [{ name: 'a', weight: 1 }, { name: 'a', weight: 2 }] } })).toThrow(/\$\.reward\.judge\.rubrics\[1\]\.name: rubric 'a' is listed twice/);
    expect(bad({ judge: { provider: 'openai', model: 'm', timeout: 'soon' } })).toThrow(/\$\.reward\.judge\.timeout: expected a duration/);
    expect(bad({ calibration: {} })).toThrow(/\$\.reward\.calibration\.path: /);
    expect(bad({ learned: { path: 'x', weight: -1 } })).toThrow(/\$\.reward\.learned\.weight: /);
    expect(bad({ rules: false, judge: { provider: 'openai', model: 'm' } })).toThrow(/\$\.reward\.rules: the judge, learned and calibration layers add to the rule layer/);
    expect(bad({ rules: true, enabled: false })).toThrow(/\$\.reward\.rules: 'rules: true' and its older name 'enabled: false' disagree/);
    const dir = await mkdtemp(path.join(tmpdir(), 'gymflow-reward-config-'));
    const file = path.join(dir, 'loop.yaml');
    await writeFile(file, ['name: r', 'env: gymflow/tool-use-v0', 'policy: { init: { tiny: {} } }', 'train: { command: sft }', 'reward:', '  judge:', '    provider: anthropic', '    model: claude', '    concurrency: 0', ''].join('\n'));
    await expect(loadPipelineConfig(file)).rejects.toThrow(new RegExp(`${file.replaceAll('/', '\\/')}:9 \\$\\.reward\\.judge\\.concurrency: `));
  });

  it('notes what the judge did, and when its budget stopped it', () => {
    const base = { judge: 'openai:m', steps: 10, judged: 10, usage: { requests: 4, cacheHits: 6, inputTokens: 300, outputTokens: 50 }, budgetExhausted: false };
    expect(judgeNote(base)).toBe('judge openai:m: 10/10 steps, 4 calls, 6 cached, 350 tokens');
    expect(judgeNote({ ...base, judged: 4, budgetExhausted: true })).toBe('judge budget exhausted after 4 calls (350 tokens): 4/10 steps judged, the rest scored without the judge');
  });
});

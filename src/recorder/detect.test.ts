import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fixture } from './__fixtures__/fixtures.js';
import { detectFormat, detectSample, MIN_CONFIDENCE, sampleFile } from './detect.js';

/** Every fixture and the format it is in (from SOURCES.md). */
const EXPECTED: [string, string][] = [
  ['swe-agent/v1-fc-testrepo-1c2844.traj', 'swe-agent'],
  ['swe-agent/v1-fc-demo-marshmallow-1867.traj', 'swe-agent'],
  ['swe-agent/legacy-gpt4-pydicom-1458.traj', 'swe-agent'],
  ['swe-agent/demo-history-only-function-calling-simple.traj', 'swe-agent'],
  ['mini-swe-agent/legacy-list-github-issue.traj.json', 'mini-swe-agent'],
  ['mini-swe-agent/v1-text-deterministic-test-output.traj.json', 'mini-swe-agent'],
  ['mini-swe-agent/v1.1-toolcall-deepseek-django-14752.traj.json', 'mini-swe-agent'],
  ['mini-swe-agent/v1.1-toolcall-error-exit-pvlib-1606.traj.json', 'mini-swe-agent'],
  ['openhands/events-basic-gui-mode.json', 'openhands-events'],
  ['openhands/events-wrong-initial-state.json', 'openhands-events'],
  ['openhands/events-basic-interactions-no-tools.json', 'openhands-events'],
  ['openhands/resolver-output.jsonl', 'openhands-resolver'],
  ['claude-code/session-v2.1.17-permission-denials.jsonl', 'claude-code'],
  ['claude-code/session-v1.0.51-summaries-system.jsonl', 'claude-code'],
  ['claude-code/session-v2.1.42-thinking-rewind-branches.jsonl', 'claude-code'],
  ['claude-code/subagent-sidechain-agent-aef063ba534d73153.jsonl', 'claude-code'],
  ['openai-chat/verifiers-math-python-gpt-4.1-mini-results.jsonl', 'verifiers'],
  ['openai-chat/verifiers-mcp-env-gpt-4.1-mini-results.jsonl', 'verifiers'],
  ['openai-chat/pydantic-ai-cassette-gpt-4o-tool-retry.yaml', 'openai-chat'],
  ['anthropic-messages/pydantic-ai-cassette-sonnet-4.5-sequential-tools.yaml', 'anthropic-messages'],
  ['anthropic-messages/pydantic-ai-cassette-haiku-4.5-parallel-tools.yaml', 'anthropic-messages'],
];

describe('detectFormat', () => {
  it.each(EXPECTED)('%s is %s', async (relative, format) => {
    const d = await detectFormat(fixture(relative));
    expect(d.adapter?.name).toBe(format);
    expect(d.confidence).toBeGreaterThanOrEqual(MIN_CONFIDENCE);
    // The runner-up, if any, is clearly behind.
    expect(d.candidates[1]?.confidence ?? 0).toBeLessThan(MIN_CONFIDENCE);
  });

  it('recognises nothing in a non-log file', async () => {
    const d = await detectFormat(fixture('SOURCES.md'));
    expect(d.adapter).toBeUndefined();
  });

  it('reads only the head: a large document is detected from its first 128 KiB', async () => {
    const sample = await sampleFile(fixture('mini-swe-agent/v1.1-toolcall-deepseek-django-14752.traj.json'));
    expect(sample.complete).toBe(false);
    expect(sample.firstRecord).toBeUndefined();
    expect(detectSample(sample).adapter?.name).toBe('mini-swe-agent');
  });

  it('detects a gymflow trajectory JSONL from its first line', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gymflow-detect-'));
    const path = join(dir, 'x.jsonl');
    await writeFile(path, '{"schemaVersion":"1.0","id":"x","steps":[],"outcome":{}}\n{"schemaVersion":"1.0"}\n');
    expect((await detectFormat(path)).adapter?.name).toBe('gymflow');
  });
});

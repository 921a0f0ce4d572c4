/**
 * docs/pipeline.md's configuration examples are valid configurations: every ```yaml block is parsed by the
 * pipeline's own schema, a whole configuration as it is, a section (`collect:`, `reward:`, …) inside a minimal
 * configuration. A field renamed or removed in `src/loop/config.ts` fails here until the docs follow.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { PACKAGE_ROOT } from '../src/core/package-root.js';
import { parsePipelineConfig } from '../src/loop/config.js';

const DOC = join(PACKAGE_ROOT, 'docs', 'pipeline.md');

/** The smallest configuration a section example is placed in. */
const BASE = { name: 'docs', env: 'gymflow/tool-use-v0', policy: { init: { tiny: {} } }, collect: { group_size: 4 }, train: { command: 'rl' }, max_iterations: 1 };

/** Each ```yaml block of the document, with the line its text starts on. */
function yamlBlocks(text: string): { line: number; body: string }[] {
  const blocks: { line: number; body: string }[] = [];
  for (const m of text.matchAll(/^```yaml\n([\s\S]*?)^```$/gm)) {
    blocks.push({ line: text.slice(0, m.index).split('\n').length + 1, body: m[1] as string });
  }
  return blocks;
}

describe('docs/pipeline.md', () => {
  const blocks = yamlBlocks(readFileSync(DOC, 'utf8'));

  it('has an example of every section of the configuration', () => {
    const keys = new Set(blocks.flatMap((b) => Object.keys(parseYaml(b.body) as object)));
    for (const section of ['policy', 'reward', 'collect', 'export', 'train', 'eval', 'phases']) expect(keys, section).toContain(section);
  });

  it.each(blocks.map((b) => [b.line, b.body] as const))('the example at line %i is a valid configuration', (line, body) => {
    const value = parseYaml(body) as Record<string, unknown>;
    const whole = 'name' in value && 'env' in value;
    expect(() => parsePipelineConfig(whole ? value : { ...BASE, ...value }, `docs/pipeline.md:${line}`)).not.toThrow();
  });
});

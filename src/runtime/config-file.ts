/**
 * Reading a pipeline configuration file: YAML (or JSON) with every problem named by its file and line. The
 * schema and its defaults are `src/loop/config.ts`, which workflows import; this part reads files.
 */
import { readFile } from 'node:fs/promises';
import { isMap, isScalar, type Node as YamlNode } from 'yaml';
import { ConfigError } from '../core/errors.js';
import { parseYamlText } from '../core/yaml.js';
import { KEY, parseSectionWithLines, parseWithLines, RewardSectionSchema, type PipelineConfig, type RewardSection } from '../loop/config.js';

/**
 * Reads and validates a pipeline configuration file (YAML, or JSON — YAML is a superset).
 *
 * @throws ConfigError naming `file:line $.field: what` for every problem, or the file when it cannot be read.
 */
export async function loadPipelineConfig(path: string): Promise<PipelineConfig> {
  const { value, lineOf } = await readYamlFile(path, 'the pipeline configuration');
  return parseWithLines(value, path, lineOf);
}

/**
 * Reads and validates a reward configuration file (YAML or JSON): the pipeline's `reward` section on its own, or a
 * whole pipeline configuration, whose `reward` section is taken (so the file a run was started with serves too).
 *
 * @throws ConfigError naming `file:line $.field: what` for every problem, or the file when it cannot be read.
 */
export async function loadRewardSection(path: string): Promise<RewardSection> {
  const { value, lineOf } = await readYamlFile(path, 'the reward configuration');
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ConfigError(`${path} $: expected the reward section (a mapping like \`profile: tool-use\`), got ${value === null ? 'nothing' : Array.isArray(value) ? 'a list' : `a ${typeof value}`}`);
  }
  const whole = Object.hasOwn(value, 'reward') && (Object.hasOwn(value, 'env') || Object.hasOwn(value, 'name'));
  const section: unknown = whole ? (value as Record<string, unknown>)['reward'] : value;
  return parseSectionWithLines(RewardSectionSchema, section, path, lineOf, 'reward configuration', whole ? ['reward'] : []);
}

/** A YAML (or JSON) file's value, and the line of the value (or, with {@link KEY}, the key) at a path in it. */
async function readYamlFile(path: string, what: string): Promise<{ value: unknown; lineOf: (p: readonly PropertyKey[]) => number | undefined }> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`${path}: cannot read ${what}: ${(err as Error).message}`);
  }
  const parsed = parseYamlText(text);
  if (!parsed.ok) throw new ConfigError(`${path}${parsed.line === undefined ? '' : `:${parsed.line}`}: not valid YAML: ${parsed.message}`);
  const { doc, lines: counter } = parsed;
  const lineOf = (p: readonly PropertyKey[]): number | undefined => {
    if (p.at(-2) === KEY) {
      // The line of the key itself in the mapping at the path before it.
      const map = doc.getIn(p.slice(0, -2) as unknown[], true);
      const pair = isMap(map) ? map.items.find((item) => isScalar(item.key) && item.key.value === p.at(-1)) : undefined;
      const range = isScalar(pair?.key) ? pair.key.range : undefined;
      return range ? counter.linePos(range[0]).line : undefined;
    }
    // The deepest node that exists on the path (a missing key points at its parent mapping).
    for (let n = p.length; n >= 0; n--) {
      const node = doc.getIn(p.slice(0, n) as unknown[], true) as YamlNode | undefined;
      if (node && typeof node === 'object' && 'range' in node && node.range) {
        return counter.linePos(node.range[0]).line;
      }
    }
    // No node on the path (an empty document): the document's first line, so the problem still has a line.
    return counter.linePos(doc.range[0]).line;
  };
  return { value: parsed.value, lineOf };
}

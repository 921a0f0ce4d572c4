/**
 * Reading a pipeline configuration file: YAML (or JSON) with every problem named by its file and line. The
 * schema and its defaults are `src/loop/config.ts`, which workflows import; this part reads files.
 */
import { readFile } from 'node:fs/promises';
import { isMap, isScalar, LineCounter, parseDocument, type Node as YamlNode } from 'yaml';
import { ConfigError } from '../core/errors.js';
import { KEY, parseWithLines, type PipelineConfig } from '../loop/config.js';

/**
 * Reads and validates a pipeline configuration file (YAML, or JSON — YAML is a superset).
 *
 * @throws ConfigError naming `file:line $.field: what` for every problem, or the file when it cannot be read.
 */
export async function loadPipelineConfig(path: string): Promise<PipelineConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`${path}: cannot read the pipeline configuration: ${(err as Error).message}`);
  }
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter, prettyErrors: false });
  if (doc.errors.length > 0) {
    const first = doc.errors[0];
    const pos = first === undefined ? undefined : counter.linePos(first.pos[0]);
    throw new ConfigError(`${path}${pos ? `:${pos.line}` : ''}: not valid YAML: ${first?.message ?? 'parse error'}`);
  }
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
  return parseWithLines(doc.toJS() as unknown, path, lineOf);
}

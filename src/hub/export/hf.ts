import path from 'node:path';
import { stringify } from 'yaml';
import { writeFileAtomically } from '../../core/output-file.js';
import { ExportError } from '../errors.js';
import { recordJsonSchema, type RecordFormat } from './schemas.js';
import { writeJsonl } from './write.js';

/**
 * The Hugging Face dataset layout that `datasets.load_dataset(dir)` reads without a loading script:
 *
 * ```
 * dir/README.md                               dataset card; YAML front matter `configs` → `data_files` per split
 * dir/data/<split>-00000-of-0000N.jsonl       JSON Lines shards (at most `shardSize` records each)
 * ```
 *
 * Empty splits get no files and no `data_files` entry (`datasets` rejects a pattern matching nothing).
 *
 * The card also declares the rows' `features` (derived from the record's JSON Schema by
 * {@link hfFeatures}). JSON has one number type, so without them Arrow infers `int64` for a float
 * column whose values in one file happen to be whole (`reward: 1`) and `double` in another, and the
 * shards no longer concatenate; with them every shard is cast to one schema.
 */

/** Options of {@link writeHfDataset}. */
export interface HfOptions {
  /** The record format of the rows. */
  record: RecordFormat;
  /** Records per shard (default 10 000). */
  shardSize?: number;
  /** Card title. */
  title?: string;
  /** Where the data came from (file path or store ref), for the card. */
  source?: string;
}

/** A `datasets` feature in the card's YAML form (`dtype`, `list`, `struct`). */
export type HfFeature = { name?: string; dtype: string } | { name?: string; list: HfFeature[] | HfFeature | string } | { name?: string; struct: HfFeature[] };

type JsonSchemaNode = Record<string, unknown>;

function nonNull(node: JsonSchemaNode): JsonSchemaNode {
  const anyOf = node.anyOf as JsonSchemaNode[] | undefined;
  if (anyOf) {
    const rest = anyOf.filter((n) => n.type !== 'null');
    if (rest.length !== 1) throw new ExportError(`hf features: cannot map a union of ${rest.length} types`);
    return nonNull(rest[0] as JsonSchemaNode);
  }
  const type = node.type;
  if (Array.isArray(type)) {
    const rest = type.filter((t) => t !== 'null');
    if (rest.length !== 1) throw new ExportError(`hf features: cannot map the types ${JSON.stringify(type)}`);
    return { ...node, type: rest[0] };
  }
  return node;
}

/** The feature of one JSON Schema node (nullability is implicit in Arrow). */
function featureOf(raw: JsonSchemaNode, where: string): Omit<HfFeature, 'name'> {
  const node = nonNull(raw);
  switch (node.type) {
    case 'string':
      return { dtype: 'string' };
    case 'integer':
      return { dtype: 'int64' };
    case 'number':
      return { dtype: 'float64' };
    case 'boolean':
      return { dtype: 'bool' };
    case 'array': {
      const inner = featureOf(node.items as JsonSchemaNode, `${where}[]`);
      if ('struct' in inner) return { list: inner.struct };
      if ('dtype' in inner) return { list: inner.dtype };
      return { list: inner as HfFeature };
    }
    case 'object':
      return { struct: structFields(node, where) };
    default:
      throw new ExportError(`hf features: ${where} has no mappable type (${JSON.stringify(node).slice(0, 80)})`);
  }
}

function structFields(node: JsonSchemaNode, where: string): HfFeature[] {
  const props = node.properties as Record<string, JsonSchemaNode> | undefined;
  if (!props) throw new ExportError(`hf features: ${where} is an object without properties (store it as a JSON string)`);
  return Object.entries(props).map(([name, child]) => ({ name, ...featureOf(child, `${where}.${name}`) }) as HfFeature);
}

/** The `dataset_info.features` of a record format, from its JSON Schema. */
export function hfFeatures(record: RecordFormat): HfFeature[] {
  return structFields(recordJsonSchema(record), record);
}

/** The shard file names of a split: `data/train-00000-of-00002.jsonl`, … */
export function shardNames(split: string, shards: number): string[] {
  const pad = (n: number): string => String(n).padStart(5, '0');
  return Array.from({ length: shards }, (_, i) => `data/${split}-${pad(i)}-of-${pad(shards)}.jsonl`);
}

/** The dataset card (README.md) text. */
export function datasetCard(counts: ReadonlyMap<string, number>, options: HfOptions): string {
  const splits = [...counts.entries()].filter(([, n]) => n > 0);
  const front = {
    configs: [{ config_name: 'default', data_files: splits.map(([split]) => ({ split, path: `data/${split}-*.jsonl` })) }],
    dataset_info: { config_name: 'default', features: hfFeatures(options.record) },
    pretty_name: options.title ?? `gymflow ${options.record} dataset`,
    tags: ['gymflow', 'agents', 'tool-use', options.record],
  };
  const rows = splits.map(([s, n]) => `| ${s} | ${n} |`).join('\n');
  return [
    '---',
    stringify(front).trimEnd(),
    '---',
    '',
    `# ${front.pretty_name}`,
    '',
    `Exported by gymflow (\`gymflow export --format hf --record ${options.record}\`)${options.source ? ` from \`${options.source}\`` : ''}.`,
    `Each row is a gymflow \`${options.record}\` record; the fields are documented, with their JSON Schema, in gymflow's \`docs/datasets.md\`.`,
    'Splits are assigned by task id, so no task appears in two splits.',
    '',
    '| split | rows |',
    '| --- | --- |',
    rows,
    '',
    '```python',
    'from datasets import load_dataset',
    'ds = load_dataset("path/to/this/directory")',
    '```',
    '',
  ].join('\n');
}

/**
 * Writes the splits into `dir` (which the caller creates, normally a temp directory renamed into
 * place). Returns the files written, relative to `dir`.
 */
export async function writeHfDataset(dir: string, splits: ReadonlyMap<string, readonly unknown[]>, options: HfOptions): Promise<string[]> {
  const shardSize = options.shardSize ?? 10_000;
  if (!Number.isInteger(shardSize) || shardSize < 1) throw new ExportError(`shard size must be a positive integer, got ${shardSize}`);
  const counts = new Map([...splits.entries()].map(([s, r]) => [s, r.length] as const));
  if ([...counts.values()].every((n) => n === 0)) throw new ExportError('nothing to export: every split is empty after filters');
  const files: string[] = [];
  for (const [split, records] of splits) {
    if (records.length === 0) continue;
    const shards = Math.ceil(records.length / shardSize);
    const names = shardNames(split, shards);
    for (let i = 0; i < shards; i++) {
      const name = names[i] as string;
      await writeJsonl(path.join(dir, name), records.slice(i * shardSize, (i + 1) * shardSize));
      files.push(name);
    }
  }
  await writeFileAtomically(path.join(dir, 'README.md'), datasetCard(counts, options));
  files.push('README.md');
  return files;
}

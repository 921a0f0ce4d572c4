import { open } from 'node:fs/promises';
import { parseYamlText } from '../core/yaml.js';
import type { LogAdapter, LogSample } from './adapter.js';
import { DETECT_HEAD_BYTES } from './adapter.js';
import { ADAPTERS } from './registry.js';

/** The result of format detection. */
export interface Detection {
  /** The best adapter, when one is confident enough (see {@link MIN_CONFIDENCE}). */
  adapter: LogAdapter | undefined;
  /** Its confidence in [0, 1] (0 when none). */
  confidence: number;
  /** Every adapter's confidence, best first (adapters at 0 left out). */
  candidates: { name: string; confidence: number }[];
}

/** Below this confidence a file is not treated as a recognised log. */
export const MIN_CONFIDENCE = 0.5;

/**
 * Reads the head of a file (at most {@link DETECT_HEAD_BYTES}) and parses its first record when it can:
 * the whole document when the head is the whole file (JSON or YAML), else the first line (JSONL).
 */
export async function sampleFile(path: string): Promise<LogSample> {
  const handle = await open(path, 'r');
  let head: string;
  let complete: boolean;
  try {
    const buffer = Buffer.alloc(DETECT_HEAD_BYTES + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    complete = bytesRead <= DETECT_HEAD_BYTES;
    // A cut multi-byte character at the end decodes as U+FFFD, which no detector relies on.
    head = buffer.subarray(0, Math.min(bytesRead, DETECT_HEAD_BYTES)).toString('utf8');
  } finally {
    await handle.close();
  }
  if (head.startsWith('\uFEFF')) head = head.slice(1);
  const sample: LogSample = { path, head, complete };
  const firstRecord = parseFirstRecord(head, complete, path);
  if (firstRecord !== undefined) sample.firstRecord = firstRecord;
  return sample;
}

function parseFirstRecord(head: string, complete: boolean, path: string): unknown {
  const trimmed = head.trim();
  if (trimmed === '') return undefined;
  if (complete && (trimmed.startsWith('{') || trimmed.startsWith('['))) {
    try {
      return JSON.parse(trimmed) as unknown;
    } catch {
      // Not one document: maybe JSONL, tried below.
    }
  }
  if (trimmed.startsWith('{')) {
    const newline = head.indexOf('\n', head.indexOf('{'));
    if (newline >= 0 || complete) {
      try {
        return JSON.parse(newline >= 0 ? head.slice(0, newline) : head) as unknown;
      } catch {
        return undefined;
      }
    }
    return undefined;
  }
  if (complete && /\.ya?ml$/i.test(path)) {
    const parsed = parseYamlText(head);
    return parsed.ok ? parsed.value : undefined;
  }
  return undefined;
}

/**
 * Detects the format of a file from its head only (a 1 GB log costs one 128 KiB read). Every adapter
 * scores the sample; the most confident wins when it reaches {@link MIN_CONFIDENCE}.
 *
 * @example
 * ```ts
 * const { adapter, confidence } = await detectFormat('session.jsonl');
 * console.log(adapter?.name, confidence); // claude-code 0.95
 * ```
 */
export async function detectFormat(path: string, adapters: readonly LogAdapter[] = ADAPTERS): Promise<Detection> {
  const sample = await sampleFile(path);
  return detectSample(sample, adapters);
}

/** {@link detectFormat} on an already-read sample. */
export function detectSample(sample: LogSample, adapters: readonly LogAdapter[] = ADAPTERS): Detection {
  const scored = adapters
    .map((adapter, order) => {
      let confidence = 0;
      try {
        confidence = adapter.detect(sample);
      } catch {
        confidence = 0;
      }
      return { adapter, order, confidence: Math.min(1, Math.max(0, Number.isFinite(confidence) ? confidence : 0)) };
    })
    .filter((s) => s.confidence > 0)
    .sort((a, b) => b.confidence - a.confidence || a.order - b.order);
  const best = scored[0];
  return {
    adapter: best && best.confidence >= MIN_CONFIDENCE ? best.adapter : undefined,
    confidence: best?.confidence ?? 0,
    candidates: scored.map((s) => ({ name: s.adapter.name, confidence: s.confidence })),
  };
}

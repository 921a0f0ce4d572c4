import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import { ConfigError } from '../../core/errors.js';
import { contentRef, sha256Ref } from '../../core/canonical.js';
import type { RubricDefinition, RubricResult } from '../types.js';

/**
 * The judge's verdict cache: in memory, plus — with a path — an append-only JSONL file, so scoring the
 * same steps again (another run, another process) costs no requests. One line per verdict:
 * `{"key":"sha256:…","provider":…,"model":…,"rubrics":{…}}`. A later line with the same key wins; a
 * line that does not parse (say, half-written when a process died) is skipped and counted.
 */

/** The parts of the cache key. */
export interface JudgeCacheKeyParts {
  provider: string;
  model: string;
  promptVersion: string;
  /** Sampling temperature (`null` when not sent): a different temperature is a different judge. */
  temperature: number | null;
  rubrics: readonly RubricDefinition[];
  /** The rendered user message (task, tools, history window, step): hashed, not stored. */
  input: string;
}

/**
 * The cache key: sha256 over the canonical JSON of provider, model, prompt version, temperature, the
 * rubric set (sorted by name, with descriptions and scales: rewording a rubric invalidates it) and the
 * sha256 of the step's rendered input (which covers the task, the history window and the step).
 */
export function judgeCacheKey(parts: JudgeCacheKeyParts): string {
  return contentRef({
    v: 1,
    provider: parts.provider,
    model: parts.model,
    promptVersion: parts.promptVersion,
    temperature: parts.temperature,
    rubrics: [...parts.rubrics].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    input: sha256Ref(parts.input),
  });
}

const LineSchema = z.object({
  key: z.string(),
  rubrics: z.record(z.string(), z.object({ score: z.number(), rationale: z.string().optional() })),
});

/** In-memory verdict cache with optional JSONL persistence. */
export class JudgeCache {
  private readonly entries = new Map<string, Record<string, RubricResult>>();
  private loaded: Promise<void> | undefined;
  private writes: Promise<void> = Promise.resolve();
  /** Lines of the cache file that could not be read. */
  corruptLines = 0;

  /** `path`: the JSONL file (created on first write); omit for a memory-only cache. */
  constructor(readonly path?: string) {}

  /** Number of verdicts held. */
  get size(): number {
    return this.entries.size;
  }

  /** The cached verdict for `key`, reading the file first if not yet read. */
  async get(key: string): Promise<Record<string, RubricResult> | undefined> {
    await this.load();
    return this.entries.get(key);
  }

  /** Stores a verdict in memory and appends it to the file. Appends are serialised within the process. */
  async set(key: string, rubrics: Record<string, RubricResult>, meta: { provider: string; model: string }): Promise<void> {
    await this.load();
    this.entries.set(key, rubrics);
    const path = this.path;
    if (path === undefined) return;
    const line = `${JSON.stringify({ key, provider: meta.provider, model: meta.model, rubrics })}\n`;
    const write = this.writes.then(async () => {
      try {
        await mkdir(dirname(path), { recursive: true });
        // One appendFile per line (O_APPEND): lines from concurrent processes do not interleave in practice.
        await appendFile(path, line, 'utf8');
      } catch (err) {
        throw new ConfigError(`judge cachePath ${path}: cannot write to it (${(err as Error).message})`);
      }
    });
    // Keep the chain alive after a failed write; the caller still sees the failure.
    this.writes = write.catch(() => undefined);
    await write;
  }

  /** Waits for pending appends. */
  async flush(): Promise<void> {
    await this.writes;
  }

  private load(): Promise<void> {
    this.loaded ??= this.readFile();
    return this.loaded;
  }

  private async readFile(): Promise<void> {
    if (this.path === undefined) return;
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw new ConfigError(`judge cachePath ${this.path}: cannot read it (${(err as Error).message})`);
    }
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      try {
        const parsed = LineSchema.safeParse(JSON.parse(line));
        if (!parsed.success) {
          this.corruptLines++;
          continue;
        }
        const rubrics: Record<string, RubricResult> = {};
        for (const [name, r] of Object.entries(parsed.data.rubrics)) {
          rubrics[name] = r.rationale !== undefined ? { score: r.score, rationale: r.rationale } : { score: r.score };
        }
        this.entries.set(parsed.data.key, rubrics); // later lines win
      } catch {
        this.corruptLines++;
      }
    }
  }
}

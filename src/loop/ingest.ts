import { z } from 'zod';

/**
 * The `ingest` workflow's input and status (workflow-safe): agent logs in a directory → convert → validate → score
 * → export, each an activity (docs/pipeline.md, "Agent logs as a pipeline"). An ingest has a name; what it has
 * taken in is recorded in the store under `ingest/<name>/state` (by the sha256 of each file's content), so a
 * second run over the same directory adds nothing, and a run on a schedule takes only the files that are new.
 */

/** The workflow's input. */
export const IngestInputSchema = z
  .object({
    /** The ingest's name: its state and outputs are named `ingest/<name>/…` in the store. */
    name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'use letters, digits, ., _ and - (starting with a letter or digit)'),
    /** The directory of agent logs (absolute; it must be readable by the CPU workers). */
    dir: z.string().min(1),
    /** The recorder format of every file; default: detected per file. */
    format: z.string().min(1).optional(),
    /** The domain profile whose rules score the trajectories (`gymflow profiles`), as `reward score --domain`. */
    domain: z.string().min(1),
    /** The dataset format of the export. */
    export: z.enum(['sft', 'dpo', 'rl']).default('sft'),
    /** The store (default: the workers'). */
    store: z.string().optional(),
    /** The CPU task queue. */
    task_queue: z.string().min(1).default('gymflow'),
  })
  .strict();

/** {@link IngestInputSchema}'s output. */
export type IngestInput = z.infer<typeof IngestInputSchema>;

/** The ref names of an ingest's state and its latest outputs. */
export function ingestRefName(name: string, what: 'state' | 'trajectories' | 'scored' | 'dataset' | 'rejected'): string {
  return `ingest/${name}/${what}`;
}

/** A log the ingest could not take in: the file, and where in it and what is wrong. */
export interface IngestProblem {
  file: string;
  line?: number;
  path: string;
  message: string;
}

/** What `ingest_status` answers. */
export interface IngestStatus {
  name: string;
  dir: string;
  state: 'running' | 'completed' | 'failed';
  stage: 'scan' | 'convert' | 'score' | 'export' | 'record' | 'done';
  /** Files in the directory, and how many of them an earlier run had taken in. */
  files: { found: number; known: number; new: number };
  /** Log files converted (with at least one trajectory), and the trajectories they gave. */
  converted: { files: number; trajectories: number };
  /** Log files rejected (none of their content converted) and every problem found, warnings included. */
  rejected: { files: number; problems: number; first: IngestProblem[] };
  /** Trajectories scored. */
  scored: number;
  /** Dataset records exported. */
  exported: number;
  /** What happened, in a sentence (`nothing new: 3 files already ingested`). */
  note?: string;
  refs: { files?: string; trajectories?: string; scored?: string; dataset?: string; rejected?: string; state?: string };
}

/** A fresh status for `input`. */
export function initialIngestStatus(input: IngestInput): IngestStatus {
  return {
    name: input.name,
    dir: input.dir,
    state: 'running',
    stage: 'scan',
    files: { found: 0, known: 0, new: 0 },
    converted: { files: 0, trajectories: 0 },
    rejected: { files: 0, problems: 0, first: [] },
    scored: 0,
    exported: 0,
    refs: {},
  };
}

import { z } from 'zod';
import { ConfigError, TaskError } from '../../core/errors.js';
import type { Split } from '../../core/types.js';
import { parseTestIds } from '../sandbox/tasks.js';
import { firstIssue, loadJsonRecords } from './json-records.js';

/** A test id list: a JSON array, or (as in SWE-bench's published data set) a string holding one. */
const TestIdList = z.union([z.array(z.string()), z.string()]);

/**
 * One SWE-bench instance as the data set stores it (`princeton-nlp/SWE-bench` and its Lite and Verified subsets,
 * exported as JSON lines or a JSON array). Other fields (`created_at`, `difficulty`, …) are allowed and kept out of
 * the way. `split` is gymflow's: which task split the instance is in (default: the environment's `split`).
 */
export const SweInstanceLineSchema = z.looseObject({
  instance_id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'letters, digits, _ . - only'),
  repo: z.string().regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/, 'expected owner/name (e.g. django/django)'),
  base_commit: z.string().regex(/^[0-9a-f]{7,40}$/, 'expected a commit id (7 to 40 hex digits)'),
  patch: z.string(),
  test_patch: z.string(),
  FAIL_TO_PASS: TestIdList,
  PASS_TO_PASS: TestIdList.default([]),
  version: z.string({ error: (i) => (typeof i.input === 'number' ? 'expected a string like "3.0" (as a number it loses its trailing zero)' : 'expected a string') }),
  environment_setup_commit: z.string().regex(/^[0-9a-f]{7,40}$/, 'expected a commit id (7 to 40 hex digits)').optional(),
  problem_statement: z.string().min(1, 'empty: the agent would have no task'),
  hints_text: z.string().default(''),
  split: z.enum(['train', 'heldout']).optional(),
});

/** A loaded instance: SWE-bench's fields with the test lists parsed. */
export interface SweInstance {
  instanceId: string;
  repo: string;
  baseCommit: string;
  /** The gold patch (the reference fix). */
  patch: string;
  testPatch: string;
  failToPass: string[];
  passToPass: string[];
  version: string;
  environmentSetupCommit: string | undefined;
  problemStatement: string;
  hintsText: string;
  split: Split;
  /** Where it was read (`file:line` or `file[index]`), for messages. */
  source: string;
}

/** Parses one instance; `where` names its place (`file:line`). */
export function parseInstance(raw: unknown, where: string, defaultSplit: Split = 'heldout'): SweInstance {
  const parsed = SweInstanceLineSchema.safeParse(raw);
  if (!parsed.success) throw new TaskError(`${where} ${firstIssue(parsed.error, raw, 'invalid instance')}`);
  const t = parsed.data;
  return {
    instanceId: t.instance_id,
    repo: t.repo,
    baseCommit: t.base_commit,
    patch: t.patch,
    testPatch: t.test_patch,
    failToPass: parseTestIds(t.FAIL_TO_PASS, `${where} $.FAIL_TO_PASS`),
    passToPass: parseTestIds(t.PASS_TO_PASS, `${where} $.PASS_TO_PASS`),
    version: t.version,
    environmentSetupCommit: t.environment_setup_commit,
    problemStatement: t.problem_statement,
    hintsText: t.hints_text,
    split: t.split ?? defaultSplit,
    source: where,
  };
}

/**
 * Reads SWE-bench instances from a file: JSON lines (one instance per line) or a JSON array. Errors name the
 * file, the line (or the array index) and the field: `swe.jsonl:3 $.base_commit: expected a commit id …`.
 *
 * @example
 * ```ts
 * const instances = loadInstances('swe-bench-lite.jsonl');
 * ```
 */
export function loadInstances(file: string, options: { split?: Split } = {}): SweInstance[] {
  const split = options.split ?? 'heldout';
  return loadJsonRecords(file, {
    noun: 'instances',
    error: TaskError,
    parse: (raw, where) => parseInstance(raw, where, split),
    id: (i) => i.instanceId,
    duplicate: (id, first) => `duplicate '${id}' (first at ${first})`,
  });
}

/**
 * The instances whose ids are in `ids`, in file order (all of them when `ids` is undefined). An id not among them is
 * a {@link ConfigError} naming the option (`where`) and the instances file: `--instance-ids: not in swe.jsonl: x, y`.
 */
export function selectInstances(instances: SweInstance[], ids: readonly string[] | undefined, where: string, file: string): SweInstance[] {
  if (!ids) return instances;
  const known = new Set(instances.map((i) => i.instanceId));
  const missing = ids.filter((id) => !known.has(id));
  if (missing.length) throw new ConfigError(`${where}: not in ${file}: ${missing.join(', ')}`);
  return instances.filter((i) => ids.includes(i.instanceId));
}

/**
 * The files a unified diff touches, from its `diff --git a/X b/Y` headers (Y), in order: what SWE-bench calls the
 * test directives before filtering.
 */
export function diffFiles(diff: string): string[] {
  return [...diff.matchAll(/^diff --git a\/.* b\/(.*)$/gm)].map((m) => m[1] as string);
}

/** The files a diff creates (`--- /dev/null`), and those it changes or deletes (they exist before it). */
export function diffFileKinds(diff: string): { created: string[]; existing: string[] } {
  const created: string[] = [];
  const existing: string[] = [];
  // Each file's section runs from its `diff --git` header to the next one.
  const sections = diff.split(/^(?=diff --git )/m).filter((s) => s.startsWith('diff --git '));
  for (const s of sections) {
    const file = /^diff --git a\/.* b\/(.*)$/m.exec(s)?.[1];
    if (file === undefined) continue;
    if (/^--- \/dev\/null$/m.test(s) || /^new file mode /m.test(s)) created.push(file);
    else existing.push(file);
  }
  return { created, existing };
}

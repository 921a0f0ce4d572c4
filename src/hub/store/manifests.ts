import { z } from 'zod';
import { formatZodIssues } from '../../core/trajectory.js';
import { StoreError } from '../errors.js';
import { REF_PATTERN } from './layout.js';

/**
 * The two artifact formats whose content names other objects (members): trajectory sets and file
 * trees. The store's `gc` and `verify` read members through these parsers, so they live apart from
 * the code that writes the formats.
 */

/** Format tag on the first line of a trajectory-set manifest. */
export const TRAJECTORY_SET_FORMAT = 'gymflow.trajectory-set';
/** Format tag of a file-tree manifest. */
export const TREE_FORMAT = 'gymflow.tree';

const ref = z.string().regex(REF_PATTERN, 'expected sha256:<64 hex digits>');

/** First line of a trajectory-set manifest. */
export const TrajectorySetHeaderSchema = z
  .object({
    format: z.literal(TRAJECTORY_SET_FORMAT),
    version: z.literal(1),
    kind: z.string().min(1),
  })
  .strict();

/**
 * One member line of a trajectory-set manifest: the trajectory's content id, the object holding its
 * behaviour (the part the id hashes; equal to `id` when the id is consistent), and everything else
 * (timing, rewards, metadata) inline.
 */
export const TrajectorySetItemSchema = z
  .object({
    id: ref,
    object: ref,
    extra: z.record(z.string(), z.unknown()),
  })
  .strict();

/** A file-tree manifest (an exported dataset directory). */
export const TreeManifestSchema = z
  .object({
    format: z.literal(TREE_FORMAT),
    version: z.literal(1),
    files: z.array(z.object({ path: z.string().min(1), object: ref, size: z.number().int().nonnegative() }).strict()),
  })
  .strict();

/** The header line of a trajectory-set manifest. */
export type TrajectorySetHeader = z.infer<typeof TrajectorySetHeaderSchema>;
/** A member line of a trajectory-set manifest. */
export type TrajectorySetItem = z.infer<typeof TrajectorySetItemSchema>;
/** A file-tree manifest. */
export type TreeManifest = z.infer<typeof TreeManifestSchema>;

function parseLine<T>(schema: z.ZodType<T>, text: string, place: string): T {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new StoreError(`${place} $: invalid JSON (${(err as Error).message})`);
  }
  const r = schema.safeParse(value);
  if (!r.success) throw new StoreError(formatZodIssues(r.error, place).join('\n'));
  return r.data;
}

/** Parses the header line of a trajectory-set manifest; `place` names it in errors (`sha256:…:1`). */
export function parseTrajectorySetHeader(text: string, place: string): TrajectorySetHeader {
  return parseLine(TrajectorySetHeaderSchema, text, place);
}

/** Parses one member line of a trajectory-set manifest. */
export function parseTrajectorySetItem(text: string, place: string): TrajectorySetItem {
  return parseLine(TrajectorySetItemSchema, text, place);
}

/** Parses a tree manifest. */
export function parseTreeManifest(text: string, place: string): TreeManifest {
  return parseLine(TreeManifestSchema, text, place);
}

/** The member object refs of a manifest of `format`, in order (duplicates kept). */
export function manifestMembers(format: string, text: string, place: string): string[] {
  if (format === 'tree') return parseTreeManifest(text, place).files.map((f) => f.object);
  if (format !== 'trajectory-set') return [];
  const lines = text.split('\n');
  parseTrajectorySetHeader(lines[0] ?? '', `${place}:1`);
  const out: string[] = [];
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line === '') continue;
    out.push(parseTrajectorySetItem(line, `${place}:${i + 1}`).object);
  }
  return out;
}

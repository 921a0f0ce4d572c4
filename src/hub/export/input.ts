import { stat } from 'node:fs/promises';
import { SchemaError } from '../../core/errors.js';
import { isErrno } from '../../core/fs.js';
import { streamJsonl } from '../../core/jsonl-file.js';
import type { Trajectory } from '../../core/trajectory.js';
import { checkTrajectoryJson } from '../../core/trajectory.js';
import type { ArtifactStore } from '../store/store.js';
import { loadTrajectories } from '../store/trajectory-set.js';
import { ExportError } from '../errors.js';

/** Where a set of trajectories came from. */
export type TrajectorySource = { kind: 'file'; path: string } | { kind: 'ref'; ref: string; spec: string };

/**
 * Reads every trajectory of a JSONL file. Every invalid line (not JSON, not a trajectory, an `id` that is not
 * its content id, as `record validate` and `reward score` check) is reported (`file:line $.path: …`,
 * the first 20 in the message, all in `issues`) and nothing is returned when any line is invalid.
 */
export async function readTrajectoryFile(file: string): Promise<Trajectory[]> {
  const out: Trajectory[] = [];
  const issues: string[] = [];
  // Each line is parsed as it is read, so no line outlives its trajectory (holding every line first, then parsing,
  // kept the whole file's text alive beside the parsed trajectories: a quarter of the time went to the collector).
  for await (const r of streamJsonl(file, file, checkTrajectoryJson)) {
    if (r.ok) out.push(r.value);
    else issues.push(...r.errors);
  }
  if (issues.length > 0) throw new SchemaError(issues.slice(0, 20).join('\n') + (issues.length > 20 ? `\n… and ${issues.length - 20} more` : ''), issues);
  return out;
}

/**
 * Loads trajectories from `spec`: an existing file path (JSONL), else a store ref, ref prefix or ref
 * name (when a store is given).
 */
export async function loadTrajectoriesFrom(spec: string, store: ArtifactStore | undefined): Promise<{ trajectories: Trajectory[]; source: TrajectorySource }> {
  try {
    const s = await stat(spec);
    if (s.isFile()) return { trajectories: await readTrajectoryFile(spec), source: { kind: 'file', path: spec } };
    throw new ExportError(`input ${spec} is a directory, not a JSONL file`);
  } catch (err) {
    if (!isErrno(err, 'ENOENT')) throw err;
  }
  if (!store) throw new ExportError(`input '${spec}' is not a file, and no store is open to resolve it as a ref`);
  const ref = await store.resolve(spec);
  return { trajectories: await loadTrajectories(store, ref), source: { kind: 'ref', ref, spec } };
}

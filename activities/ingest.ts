/**
 * Activities of the `ingest` workflow (workflows/ingest.ts): agent logs in a directory → standard trajectories →
 * scored → a dataset, each a thin layer over the recorder, the reward rules and the exporter, with what the ingest
 * has taken in kept in the store (`ingest/<name>/state`, by the sha256 of each file) so that runs are idempotent.
 *
 * - `scanLogs`: the directory's files, those new to the ingest stored as an `ingest-files` artifact;
 * - `convertLogs`: each new file through the recorder (format detected or given) and the trajectory validator; a
 *   malformed log is reported with its file, line and JSON path and the others go on;
 * - `scoreLogs`: the rules of the domain profile on every trajectory;
 * - `recordIngested`: the new files added to the ingest's state (after the export: a run that failed before takes
 *   them again).
 * The export is `exportTrainingData`, the training loop's.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { z } from 'zod';
import { parseTrajectory, type Trajectory } from '../src/core/trajectory.js';
import { loadTrajectories, putTrajectories } from '../src/hub/store/trajectory-set.js';
import { RewardSectionSchema } from '../src/loop/config.js';
import { ingestRefName, type IngestProblem } from '../src/loop/ingest.js';
import { isConversionProblem } from '../src/recorder/adapter.js';
import { convertFile, walkFiles } from '../src/recorder/convert.js';
import { openWorkspace, type Workspace, type WorkspaceDefaults } from '../src/runtime/workspace.js';
import { parseInput, progressReporter, withFailureMapping } from './common.js';
import { storeRef as ref } from './schemas.js';
import { scoreWithRewardSection } from './score-set.js';
import { defined } from '../src/core/defined.js';

const Where = { store: z.string().optional() };

/** Problems listed in a result (all of them are in the stored `ingest-problems` artifact). */
const FIRST_PROBLEMS = 10;

/** A file of the directory: its path and the sha256 of its content. */
interface LogFile {
  path: string;
  hash: string;
  size: number;
}

/** What an ingest has taken in: every file it saw, by content hash. */
interface IngestState {
  format: 'gymflow.ingest-state';
  files: Record<string, { path: string; outcome: 'converted' | 'rejected'; at: string }>;
}

async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

async function readState(ws: Workspace, name: string): Promise<IngestState> {
  const at = await ws.store.getRef(ingestRefName(name, 'state'));
  if (at === undefined) return { format: 'gymflow.ingest-state', files: {} };
  return (await ws.store.getJson(at)) as IngestState;
}

/** The input of `scanLogs`: the ingest's name, its directory and store. */
export const ScanLogsInputSchema = z.object({ name: z.string(), dir: z.string(), ...Where });
/** The input of `convertLogs`: the `ingest-files` artifact of `scanLogs` and the format, if given. */
export const ConvertLogsInputSchema = z.object({ name: z.string(), files: ref, format: z.string().optional(), ...Where });
/** The input of `scoreLogs`: the converted set and the domain profile whose rules score it. */
export const ScoreLogsInputSchema = z.object({ name: z.string(), setRef: ref, domain: z.string(), ...Where });
/** The input of `recordIngested`: the run's files, the hashes of those rejected, and its outputs (the state's parents). */
export const RecordIngestedInputSchema = z.object({
  name: z.string(),
  files: ref,
  rejected: z.array(z.string()),
  outputs: z.array(ref),
  ...Where,
});

/** Ingest activities; `defaults` are the worker's store and work directory. */
export function createIngestActivities(defaults: WorkspaceDefaults) {
  return {
    /** The directory's files; those the ingest has not seen (by content) stored as an `ingest-files` artifact. */
    async scanLogs(input: z.input<typeof ScanLogsInputSchema>): Promise<{ found: number; known: number; new: number; ref?: string }> {
      const o = parseInput(ScanLogsInputSchema, input, 'scanLogs');
      return withFailureMapping(async () => {
        const ws = await openWorkspace(o, defaults);
        const state = await readState(ws, o.name);
        const files: LogFile[] = [];
        const seen = new Set<string>();
        let found = 0;
        for await (const path of walkFiles(o.dir)) {
          found++;
          const size = await stat(path).then((s) => s.size, () => 0);
          const hash = await sha256File(path).catch(() => undefined);
          // Unreadable: converting it reports why. Twice the same content (a copy): taken once.
          if (hash !== undefined && (state.files[hash] !== undefined || seen.has(hash))) continue;
          if (hash !== undefined) seen.add(hash);
          files.push({ path, hash: hash ?? `unreadable:${path}`, size });
        }
        if (files.length === 0) return { found, known: found, new: 0 };
        const entry = await ws.store.putJson({ format: 'gymflow.ingest-files', dir: o.dir, files }, { kind: 'ingest-files', meta: { ingest: o.name, files: files.length } });
        return { found, known: found - files.length, new: files.length, ref: entry.ref };
      });
    },

    /**
     * Converts every listed file (the recorder; format detected or given) and validates each trajectory; stores the
     * trajectories as one set and the problems as an `ingest-problems` artifact. Never fails for a bad log.
     */
    async convertLogs(input: z.input<typeof ConvertLogsInputSchema>): Promise<{
      ref?: string;
      files: number;
      trajectories: number;
      rejected: string[];
      problems: number;
      first: IngestProblem[];
      problemsRef?: string;
    }> {
      const o = parseInput(ConvertLogsInputSchema, input, 'convertLogs');
      return withFailureMapping(async () => {
        const ws = await openWorkspace(o, defaults);
        const { files } = (await ws.store.getJson(o.files)) as { files: LogFile[] };
        const report = progressReporter('collect', 'files');
        const trajectories: Trajectory[] = [];
        const problems: IngestProblem[] = [];
        const rejected: string[] = [];
        let converted = 0;
        for (const [i, file] of files.entries()) {
          let got = 0;
          for await (const item of convertFile(file.path, defined({ format: o.format }))) {
            if (isConversionProblem(item)) {
              problems.push({ file: item.file, path: item.path, message: item.message, ...defined({ line: item.line }) });
              continue;
            }
            try {
              trajectories.push(parseTrajectory(item, `${file.path} (trajectory ${got + 1})`));
              got++;
            } catch (err) {
              problems.push({ file: file.path, path: '$', message: (err as Error).message });
            }
          }
          // A file with no trajectory at all is rejected (its problems say why); one with some is converted.
          if (got > 0) converted++;
          else rejected.push(file.hash);
          report(i + 1, files.length);
        }
        const problemsRef =
          problems.length === 0 ? undefined : (await ws.store.putJson({ format: 'gymflow.ingest-problems', problems }, { kind: 'ingest-problems', parents: [o.files], name: ingestRefName(o.name, 'rejected') })).ref;
        const set =
          trajectories.length === 0
            ? undefined
            : await putTrajectories(ws.store, trajectories, { kind: 'trajectories', parents: [o.files], meta: { ingest: o.name, files: converted }, name: ingestRefName(o.name, 'trajectories') });
        return {
          ...defined({ ref: set?.ref }),
          files: converted,
          trajectories: trajectories.length,
          rejected,
          problems: problems.length,
          first: problems.slice(0, FIRST_PROBLEMS),
          ...defined({ problemsRef }),
        };
      });
    },

    /** Scores every trajectory of the set with the rules of the domain profile; stores the scored set. */
    async scoreLogs(input: z.input<typeof ScoreLogsInputSchema>): Promise<{ ref: string; scored: number }> {
      const o = parseInput(ScoreLogsInputSchema, input, 'scoreLogs');
      return withFailureMapping(async () => {
        const ws = await openWorkspace(o, defaults);
        const all = await loadTrajectories(ws.store, o.setRef);
        const report = progressReporter('reward', 'trajectories');
        // The training loop's scoring, with the rules of the domain profile.
        const { scored, lineage } = await scoreWithRewardSection(ws.store, all, RewardSectionSchema.parse({ profile: o.domain }), '', { onScored: report });
        const entry = await putTrajectories(ws.store, scored, { kind: 'scored-trajectories', parents: [o.setRef], meta: { ingest: o.name, domain: o.domain, reward: lineage }, name: ingestRefName(o.name, 'scored') });
        return { ref: entry.ref, scored: scored.length };
      });
    },

    /** Adds the run's files to the ingest's state (converted, or rejected: unchanged, they would be again). */
    async recordIngested(input: z.input<typeof RecordIngestedInputSchema>): Promise<{ ref: string; files: number }> {
      const o = parseInput(RecordIngestedInputSchema, input, 'recordIngested');
      return withFailureMapping(async () => {
        const ws = await openWorkspace(o, defaults);
        const state = await readState(ws, o.name);
        const { files } = (await ws.store.getJson(o.files)) as { files: LogFile[] };
        const rejected = new Set(o.rejected);
        const at = new Date().toISOString();
        for (const f of files) state.files[f.hash] = { path: f.path, outcome: rejected.has(f.hash) ? 'rejected' : 'converted', at };
        const previous = await ws.store.getRef(ingestRefName(o.name, 'state'));
        const entry = await ws.store.putJson(state, {
          kind: 'ingest-state',
          parents: [...(previous === undefined ? [] : [previous]), o.files, ...o.outputs],
          meta: { ingest: o.name, files: Object.keys(state.files).length },
          name: ingestRefName(o.name, 'state'),
        });
        return { ref: entry.ref, files: Object.keys(state.files).length };
      });
    },
  };
}

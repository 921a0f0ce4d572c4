/**
 * Fuzz targets of the recorder: every adapter of `ADAPTERS` (so an adapter added there is fuzzed with no change
 * here) on arbitrary bytes, JSON and JSONL; mutations of the real agent-log fixtures through detection and
 * each fixture's own adapter; and a conversion into the artifact store and into an existing output file, which
 * must leave what is already stored byte for byte as it was.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import fc from 'fast-check';
import { stringify as yamlStringify, parse as yamlParse } from 'yaml';
import { checkTrajectory, type Trajectory } from '../../src/core/trajectory.js';
import { ArtifactStore, putTrajectories } from '../../src/hub/store/index.js';
import type { ConversionItem, LogAdapter, LogSample } from '../../src/recorder/adapter.js';
import { isConversionProblem } from '../../src/recorder/adapter.js';
import { convertFile, walkFiles } from '../../src/recorder/convert.js';
import { detectFormat, sampleFile } from '../../src/recorder/detect.js';
import { ADAPTERS } from '../../src/recorder/registry.js';
import { writeJsonl } from '../../src/recorder/write.js';
import { FIXTURES } from '../../src/recorder/__fixtures__/fixtures.js';
import { byteMutations, type FuzzTarget, jsonMutations, jsonValue, mutateBytes, mutateJson, timed, timedAsync } from './harness.js';

/** Keys the adapters look for, so that generated records reach past their first check. */
const LOG_KEYS = [
  'messages', 'role', 'content', 'tool_calls', 'function', 'name', 'arguments', 'type', 'history', 'trajectory', 'info', 'action',
  'observation', 'thought', 'steps', 'id', 'tool_use', 'input', 'text', 'tool_use_id', 'message', 'uuid', 'parentUuid', 'sessionId',
  'isSidechain', 'source', 'args', 'extras', 'completion', 'prompt', 'reward', 'answer', 'instance_id', 'model_patch', 'exit_status',
  'submission', 'task', 'outcome', 'schemaVersion', 'envId', 'agent', 'interactions', 'response', 'request', 'toolUseResult', 'version',
  'timestamp', 'model', 'usage', 'tool_call_id', 'mini_version', 'config', 'events', 'cause', 'tool_call_metadata', 'body', 'parsed_body',
];

const EXTENSIONS = ['.json', '.jsonl', '.traj', '.traj.json', '.yaml', '.txt', ''];

/** Drains a conversion within the time bound and checks every item: problems name the file and a JSON path, trajectories are valid. */
async function checkConversion(what: string, items: AsyncIterable<ConversionItem>, file: string): Promise<{ trajectories: Trajectory[]; problems: number }> {
  const drain = async (): Promise<{ trajectories: Trajectory[]; problems: number }> => {
    const trajectories: Trajectory[] = [];
    let problems = 0;
    for await (const item of items) {
      if (isConversionProblem(item)) {
        problems += 1;
        if (item.file !== file) throw new Error(`${what}: a problem names ${JSON.stringify(item.file)}, not the file ${JSON.stringify(file)}`);
        if (!item.path.startsWith('$')) throw new Error(`${what}: a problem's path ${JSON.stringify(item.path)} is not a JSON path`);
        if (typeof item.message !== 'string' || item.message.trim() === '') throw new Error(`${what}: a problem without a message`);
        if (item.line !== undefined && (!Number.isInteger(item.line) || item.line < 1)) throw new Error(`${what}: a problem's line ${item.line} is not a 1-based line`);
      } else {
        // What a JSONL reader sees: the trajectory after a JSON round trip must pass the schema and its id check.
        checkTrajectory(JSON.parse(JSON.stringify(item)) as unknown, `${what} trajectory`);
        trajectories.push(item);
      }
    }
    return { trajectories, problems };
  };
  return timedAsync(what, drain());
}

function tempDir(prefix: string): { dir: () => string; cleanup: () => Promise<void> } {
  let dir: string | undefined;
  return {
    dir: () => (dir ??= mkdtempSync(join(tmpdir(), prefix))),
    cleanup: async () => {
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
      dir = undefined;
    },
  };
}

/** What a generated log file holds: bytes, one JSON document, JSONL records, or YAML. */
const fileContent: fc.Arbitrary<Uint8Array> = fc.oneof(
  fc.uint8Array({ maxLength: 512 }),
  fc.string({ unit: 'binary', maxLength: 256 }).map((s) => new TextEncoder().encode(s)),
  jsonValue(LOG_KEYS, 5).map((v) => new TextEncoder().encode(JSON.stringify(v))),
  fc.array(jsonValue(LOG_KEYS, 4), { maxLength: 6 }).map((vs) => new TextEncoder().encode(vs.map((v) => JSON.stringify(v)).join('\n'))),
  jsonValue(LOG_KEYS, 4).map((v) => new TextEncoder().encode(yamlStringify(v))),
);

function convertBytesTarget(): FuzzTarget {
  const tmp = tempDir('gymflow-fuzz-rec-');
  let n = 0;
  return {
    name: 'recorder/convert-bytes',
    ciShare: 1,
    cleanup: tmp.cleanup,
    property: () =>
      fc.asyncProperty(fc.constantFrom(...ADAPTERS), fc.constantFrom(...EXTENSIONS), fileContent, async (adapter: LogAdapter, ext, bytes) => {
        const file = join(tmp.dir(), `case-${n++}${ext}`);
        writeFileSync(file, bytes);
        try {
          // The adapter's contract: never throws for bad input, problems are yielded.
          await checkConversion(`${adapter.name} on ${file}`, adapter.convert(file, { file, options: {} }), file);
          // Detection reads only the head, and every adapter's detect answers a number in [0, 1] without throwing.
          const sample = await sampleFile(file);
          checkDetect(sample);
        } finally {
          rmSync(file, { force: true });
        }
      }),
  };
}

function checkDetect(sample: LogSample): void {
  for (const adapter of ADAPTERS) {
    const confidence = timed(`${adapter.name}.detect`, () => adapter.detect(sample));
    if (typeof confidence !== 'number' || !(confidence >= 0 && confidence <= 1)) throw new Error(`${adapter.name}.detect answered ${String(confidence)}, not a number in [0, 1]`);
  }
}

function detectSampleTarget(): FuzzTarget {
  return {
    name: 'recorder/detect',
    property: () =>
      fc.property(
        fc.record({ path: fc.constantFrom(...EXTENSIONS.map((e) => `log${e}`)), head: fc.string({ maxLength: 200 }), complete: fc.boolean() }),
        fc.option(jsonValue(LOG_KEYS, 5), { nil: undefined }),
        (s, firstRecord) => checkDetect(firstRecord === undefined ? s : { ...s, firstRecord }),
      ),
  };
}

/** The real fixtures, each with the adapter that detection picks for it. */
interface Fixture {
  path: string;
  bytes: Buffer;
  adapter: LogAdapter;
}

async function loadFixtures(): Promise<Fixture[]> {
  const out: Fixture[] = [];
  for await (const path of walkFiles(FIXTURES)) {
    if (path.endsWith('.md')) continue;
    const { adapter } = await detectFormat(path);
    if (adapter === undefined) throw new Error(`fixture ${path}: no adapter detects it`);
    out.push({ path, bytes: await readFile(path), adapter });
  }
  if (out.length === 0) throw new Error(`no agent-log fixtures under ${FIXTURES}`);
  return out;
}

/** A fixture changed structurally (a JSON/YAML subtree, or one JSONL record) or byte-wise. */
function mutatedFixture(fixtures: () => Fixture[]): fc.Arbitrary<{ fixture: Fixture; bytes: Buffer; how: string }> {
  return fc
    .record({ pick: fc.nat(), structural: fc.boolean(), line: fc.nat(), json: jsonMutations(LOG_KEYS), bytes: byteMutations() })
    .map(({ pick, structural, line, json, bytes }) => {
      const all = fixtures();
      const fixture = all[pick % all.length] as Fixture;
      if (structural) {
        const text = fixture.bytes.toString('utf8');
        const name = relative(FIXTURES, fixture.path);
        if (/\.ya?ml$/.test(fixture.path)) return { fixture, bytes: Buffer.from(yamlStringify(mutateJson(yamlParse(text), json))), how: `${name} yaml ${JSON.stringify(json)}` };
        if (fixture.path.endsWith('.jsonl')) {
          const lines = text.split('\n');
          const i = line % lines.length;
          if ((lines[i] ?? '').trim() !== '') lines[i] = JSON.stringify(mutateJson(JSON.parse(lines[i] as string), json));
          return { fixture, bytes: Buffer.from(lines.join('\n')), how: `${name} line ${i + 1} ${JSON.stringify(json)}` };
        }
        return { fixture, bytes: Buffer.from(JSON.stringify(mutateJson(JSON.parse(text), json))), how: `${name} json ${JSON.stringify(json)}` };
      }
      return { fixture, bytes: mutateBytes(fixture.bytes, bytes), how: `${relative(FIXTURES, fixture.path)} bytes` };
    });
}

function fixtureMutationTarget(): FuzzTarget {
  const tmp = tempDir('gymflow-fuzz-fix-');
  let fixtures: Fixture[] = [];
  let n = 0;
  return {
    name: 'recorder/fixture-mutations',
    ciShare: 0.1,
    setup: async () => {
      fixtures = await loadFixtures();
    },
    cleanup: tmp.cleanup,
    property: () =>
      fc.asyncProperty(mutatedFixture(() => fixtures), async ({ fixture, bytes, how }) => {
        const file = join(tmp.dir(), `case-${n++}-${fixture.path.split('/').at(-1) as string}`);
        writeFileSync(file, bytes);
        try {
          await checkConversion(`${fixture.adapter.name} on mutated ${how}`, fixture.adapter.convert(file, { file, options: {} }), file);
          await checkConversion(`detect+convert on mutated ${how}`, convertFile(file), file);
        } finally {
          rmSync(file, { force: true });
        }
      }),
  };
}

/** Every file under `root` but the store's temp folder, with its bytes. */
async function snapshot(root: string): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (relative(root, full) !== 'tmp') await walk(full);
      } else out.set(relative(root, full), await readFile(full));
    }
  };
  await walk(root);
  return out;
}

function unchanged(before: Map<string, Buffer>, after: Map<string, Buffer>, what: string): void {
  for (const [path, bytes] of before) {
    const now = after.get(path);
    if (now === undefined) throw new Error(`${what}: ${path} was removed`);
    if (!now.equals(bytes)) throw new Error(`${what}: ${path} changed`);
  }
}

/**
 * Cases per store: then a fresh one, holding only the existing set again. Every case checks the whole store byte for
 * byte, and every case adds to it, so one store for the run would make a case cost grow with the cases before it.
 */
const CASES_PER_STORE = 20;

function storeTarget(): FuzzTarget {
  const tmp = tempDir('gymflow-fuzz-store-');
  let fixtures: Fixture[] = [];
  const existing: Trajectory[] = [];
  let store: ArtifactStore | undefined;
  let out = '';
  let n = 0;
  /** A store holding what is already stored: a real conversion's trajectories, under a name. */
  const freshStore = async (): Promise<ArtifactStore> => {
    if (store !== undefined) rmSync(store.root, { recursive: true, force: true });
    const s = await ArtifactStore.open({ root: join(tmp.dir(), `store-${n}`) });
    await putTrajectories(s, existing, { name: 'fuzz/existing' });
    return s;
  };
  return {
    name: 'recorder/store-unchanged',
    ciShare: 0.02,
    setup: async () => {
      fixtures = await loadFixtures();
      const first = fixtures.find((f) => f.path.includes('openhands')) ?? (fixtures[0] as Fixture);
      for await (const item of convertFile(first.path)) if (!isConversionProblem(item)) existing.push(item);
      store = await freshStore();
      // And an earlier output file.
      out = join(tmp.dir(), 'out', 'converted.jsonl');
      mkdirSync(join(tmp.dir(), 'out'));
      await writeJsonl(existing, out);
    },
    cleanup: tmp.cleanup,
    property: () =>
      fc.asyncProperty(mutatedFixture(() => fixtures), async ({ fixture, bytes, how }) => {
        if (n > 0 && n % CASES_PER_STORE === 0) store = await freshStore();
        const s = store as ArtifactStore;
        const file = join(tmp.dir(), `case-${n++}-${fixture.path.split('/').at(-1) as string}`);
        writeFileSync(file, bytes);
        try {
          const before = await snapshot(s.root);
          const outBefore = readFileSync(out);
          const { trajectories } = await checkConversion(`convert mutated ${how}`, convertFile(file), file);
          await timedAsync('putTrajectories', putTrajectories(s, trajectories, { name: `fuzz/case-${n}` }));
          unchanged(before, await snapshot(s.root), `store after storing mutated ${how}`);
          // `record convert -o` with an existing output: left as it was when nothing converts.
          const summary = await writeJsonl(convertFile(file), out, { keepWhenEmpty: true, replace: true });
          if (!summary.committed && !readFileSync(out).equals(outBefore)) throw new Error(`output file changed though nothing converted from mutated ${how}`);
          if (summary.committed) writeFileSync(out, outBefore);
        } finally {
          rmSync(file, { force: true });
        }
      }),
  };
}

/** The recorder's fuzz targets. */
export function recorderTargets(): FuzzTarget[] {
  return [detectSampleTarget(), convertBytesTarget(), fixtureMutationTarget(), storeTarget()];
}

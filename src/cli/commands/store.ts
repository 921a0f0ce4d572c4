import { stat } from 'node:fs/promises';
import type { Command } from 'commander';
import { InvalidArgumentError, Option } from 'commander';
import { durationMs } from '../../core/duration.js';
import { StoreError } from '../../hub/errors.js';
import { checkoutArtifact } from '../../hub/store/checkout.js';
import { isS3Url, resolveStoreRoot, shortRef } from '../../hub/store/layout.js';
import type { IndexEntry } from '../../hub/store/index-entry.js';
import type { LineageNode } from '../../hub/store/lineage.js';
import { ArtifactStore } from '../../hub/store/store.js';
import { printJson } from '../options.js';
import { formatTable } from '../table.js';
import { defined } from '../../core/defined.js';

/** Parses `0`, `90s`, `10m`, `1h`, `2d` (a duration of src/core/duration.ts, or zero) into milliseconds. */
export function parseDuration(value: string): number {
  const v = value.trim();
  // A bare number other than 0 is refused: `--grace 60` meant as seconds would be 60 ms, which no write outlasts.
  if (/^\d+(?:\.\d+)?$/.test(v) && Number(v) === 0) return 0;
  const ms = durationMs(v);
  if (Number.isNaN(ms)) throw new InvalidArgumentError(`expected a duration with its unit (ms, s, m, h or d) like 30s, 10m, 1h or 2d, or 0; got '${value}'`);
  return ms;
}

/** The store's readable refs, with a warning on stderr for each ref file that holds no ref. */
async function scanRefsWarning(s: ArtifactStore): Promise<{ name: string; ref: string }[]> {
  const { refs, bad } = await s.scanRefs();
  for (const b of bad) console.error(`warning: ${b.path} holds no ref (${b.message}); left out`);
  return refs;
}

/** `12.3 KiB` for a byte count. */
export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${n} B` : `${v.toFixed(1)} ${units[u]}`;
}

/** Adds the `--store <dir>` option every store-using command shares. */
export function withStoreOption(cmd: Command): Command {
  return cmd.option('--store <dir|s3://bucket/prefix>', 'artifact store: a directory or s3://bucket/prefix (default: $GYMFLOW_STORE, else .gymflow/store)');
}

/**
 * Opens the store named by `--store`, `$GYMFLOW_STORE` or the default. Only commands that store something
 * (`create`: collect, `export --name`, `eval --save`) create it; reading from one that is not there is an error,
 * rather than an empty store made as a side effect of a typo.
 */
export async function openStore(opts: { store?: string }, create = false): Promise<ArtifactStore> {
  const root = resolveStoreRoot(opts.store);
  // A bucket that does not exist is refused by open itself (create: false).
  if (isS3Url(root)) return ArtifactStore.open({ root, create });
  if (!create && !(await stat(root).catch(() => undefined))?.isDirectory()) {
    throw new StoreError(`no artifact store at ${root}: pass --store DIR or set $GYMFLOW_STORE (a store is created by collect, export --name or eval --save)`);
  }
  return ArtifactStore.open({ root });
}

function lineageLines(node: LineageNode, prefix = '', last = true, root = true): string[] {
  const e = node.entry;
  const label = e
    ? `${shortRef(node.ref)} ${kindLabel(e)}${node.names.length ? ` [${node.names.join(', ')}]` : ''} ${e.createdAt}${node.repeated ? ' (see above)' : ''}`
    : `${shortRef(node.ref)} (not in this store)`;
  const lines = [root ? label : `${prefix}${last ? '└─ ' : '├─ '}${label}`];
  const childPrefix = root ? '' : `${prefix}${last ? '   ' : '│  '}`;
  node.parents.forEach((p, i) => lines.push(...lineageLines(p, childPrefix, i === node.parents.length - 1, false)));
  return lines;
}

/** The kind, marked when the artifact was pruned. */
function kindLabel(e: IndexEntry): string {
  return e.prunedAt === undefined ? e.kind : `${e.kind} (pruned)`;
}

function entryRow(e: IndexEntry, names: Map<string, string[]>): Record<string, unknown> {
  return {
    ref: shortRef(e.ref),
    kind: kindLabel(e),
    size: formatBytes(e.size),
    count: typeof e.meta?.count === 'number' ? e.meta.count : '',
    created: e.createdAt.replace(/\.\d+Z$/, 'Z'),
    names: (names.get(e.ref) ?? []).join(','),
    parents: e.parents.length,
  };
}

/** `gymflow store ls|show|checkout|lineage|prune|gc|verify|tag|untag`: the content-addressed artifact store. */
export function storeCommand(program: Command): void {
  const store = program.command('store').description('the content-addressed artifact store (see docs/store.md)');

  withStoreOption(store.command('ls'))
    .description('list artifacts, newest first')
    .option('--kind <kind>', 'only artifacts of this kind (trajectories, dataset, …)')
    .option('--json', 'print JSON')
    .action(async (opts: { store?: string; kind?: string; json?: boolean }) => {
      const s = await openStore(opts);
      const entries = await s.list(defined({ kind: opts.kind }));
      const refs = await scanRefsWarning(s);
      if (opts.json) return printJson({ root: s.location, artifacts: entries, refs });
      const names = new Map<string, string[]>();
      for (const r of refs) names.set(r.ref, [...(names.get(r.ref) ?? []), r.name]);
      if (entries.length === 0) return console.log(`no artifacts in ${s.location}`);
      console.log(
        formatTable(
          entries.map((e) => entryRow(e, names)),
          [{ key: 'ref' }, { key: 'kind' }, { key: 'size', align: 'right' }, { key: 'count', align: 'right' }, { key: 'created' }, { key: 'parents', align: 'right' }, { key: 'names' }],
        ),
      );
    });

  withStoreOption(store.command('show <ref>'))
    .description('show an artifact’s index entry (ref, prefix or name); --content prints its bytes')
    .option('--content', 'write the artifact’s content to stdout')
    .option('--json', 'print JSON')
    .action(async (spec: string, opts: { store?: string; content?: boolean; json?: boolean }) => {
      const s = await openStore(opts);
      const ref = await s.resolve(spec);
      if (opts.content) {
        await s.statForRead(ref);
        process.stdout.write(await s.get(ref));
        return;
      }
      const entry = await s.stat(ref);
      const names = (await s.listRefs()).filter((r) => r.ref === ref).map((r) => r.name);
      if (opts.json) return printJson({ ...entry, names });
      console.log(`ref:      ${entry.ref}`);
      console.log(`kind:     ${entry.kind} (${entry.format})`);
      console.log(`size:     ${formatBytes(entry.size)}`);
      console.log(`created:  ${entry.createdAt}`);
      if (names.length) console.log(`names:    ${names.join(', ')}`);
      for (const p of entry.parents) console.log(`parent:   ${p}`);
      if (entry.meta) console.log(`meta:     ${JSON.stringify(entry.meta)}`);
      if (entry.prunedAt !== undefined) console.log(`pruned:   ${entry.prunedAt} (content released; entry and lineage kept)`);
    });

  withStoreOption(store.command('checkout <ref> <dest>'))
    .description('write an artifact out (ref, prefix or name): a tree (checkpoint, ONNX policy, dataset) as the directory DEST, a trajectory set as JSONL trajectories, anything else byte for byte; DEST must not exist')
    .option('--json', 'print JSON')
    .action(async (spec: string, dest: string, opts: { store?: string; json?: boolean }) => {
      if (dest.trim() === '') throw new StoreError('checkout: DEST is empty; give the file or directory to write');
      const s = await openStore(opts);
      const { entry, files, bytes, trajectories } = await checkoutArtifact(s, await s.resolve(spec), dest);
      if (opts.json) return printJson({ ref: entry.ref, kind: entry.kind, format: entry.format, dest, files, bytes, ...defined({ trajectories }) });
      const what = trajectories === undefined ? `${files} file${files === 1 ? '' : 's'}` : `${trajectories} trajectories`;
      console.log(`${shortRef(entry.ref)} ${entry.kind} -> ${dest} (${what}, ${formatBytes(bytes)})`);
    });

  withStoreOption(store.command('lineage <ref>'))
    .description('show what an artifact was made from, recursively')
    .option('--json', 'print JSON')
    .action(async (spec: string, opts: { store?: string; json?: boolean }) => {
      const s = await openStore(opts);
      await scanRefsWarning(s); // the names in the tree come from the refs: say which could not be read
      const tree = await s.lineage(await s.resolve(spec));
      if (opts.json) return printJson(tree);
      console.log(lineageLines(tree).join('\n'));
    });

  withStoreOption(store.command('prune <refs...>'))
    .description('prune artifacts (refs, prefixes or names): keep their index entries, names and lineage, release their content (a checkpoint’s files, a trajectory set’s trajectories) for the next gc')
    .option('--json', 'print JSON')
    .action(async (specs: string[], opts: { store?: string; json?: boolean }) => {
      const s = await openStore(opts);
      // Every spec is resolved before anything is pruned, so a typo prunes nothing.
      const refs = [];
      for (const spec of specs) refs.push({ spec, ref: await s.resolve(spec) });
      const pruned = [];
      for (const { spec, ref } of refs) pruned.push({ spec, ...(await s.prune(ref)) });
      if (opts.json) return printJson(pruned.map((p) => ({ spec: p.spec, ref: p.entry.ref, kind: p.entry.kind, prunedAt: p.entry.prunedAt, already: p.already })));
      for (const p of pruned) console.log(`${p.already ? 'already pruned' : 'pruned'} ${shortRef(p.entry.ref)} ${p.entry.kind} (${p.spec})`);
      console.log('run `gymflow store gc` to delete the content no other artifact uses');
    });

  withStoreOption(store.command('gc'))
    .description('delete artifacts and objects not reachable from a named ref')
    .addOption(new Option('--grace <duration>', 'keep anything touched within this long (writes in flight): 0, or a number with its unit ms, s, m, h or d').argParser(parseDuration).default(3_600_000, '1h'))
    .option('--dry-run', 'report what would be deleted')
    .option('--json', 'print JSON')
    .action(async (opts: { store?: string; grace: number; dryRun?: boolean; json?: boolean }) => {
      const s = await openStore(opts);
      const report = await s.gc({ graceMs: opts.grace, dryRun: opts.dryRun ?? false });
      if (opts.json) return printJson(report);
      const verb = report.dryRun ? 'would delete' : 'deleted';
      console.log(
        `${verb} ${report.deletedArtifacts.length} artifact(s) and ${report.deletedObjects} object(s) (${formatBytes(report.freedBytes)}); ` +
          `kept ${report.keptArtifacts} artifact(s), ${report.keptObjects} object(s) reachable from ${report.roots} ref(s); removed ${report.tempFilesRemoved} temp file(s) and ${report.journalsRemoved} abandoned episode journal(s)`,
      );
    });

  withStoreOption(store.command('verify'))
    .description('re-hash every object and check index entries, refs and manifests (exit 1 on problems)')
    .option('--json', 'print JSON')
    .action(async (opts: { store?: string; json?: boolean }) => {
      const s = await openStore(opts);
      const report = await s.verify();
      if (!report.ok) process.exitCode = 1;
      if (opts.json) return printJson(report);
      console.log(`${report.ok ? 'ok' : 'PROBLEMS'}: ${report.objects} object(s), ${report.artifacts} artifact(s), ${report.refs} ref(s), ${formatBytes(report.bytes)}, ${report.tempFiles} temp file(s)`);
      for (const p of report.problems) console.log(`  ${p.code}: ${p.path}: ${p.message}`);
      for (const w of report.warnings) console.log(`  warning: ${w}`);
    });

  withStoreOption(store.command('tag <name> <ref>'))
    .description('point a ref name at an artifact (a gc root)')
    .action(async (name: string, spec: string, opts: { store?: string }) => {
      const s = await openStore(opts);
      const ref = await s.resolve(spec);
      await s.setRef(name, ref);
      console.log(`${name} -> ${ref}`);
    });

  withStoreOption(store.command('untag <name>'))
    .description('remove a ref name (its artifacts become collectable)')
    .action(async (name: string, opts: { store?: string }) => {
      const s = await openStore(opts);
      console.log((await s.deleteRef(name)) ? `removed ${name}` : `no ref named ${name}`);
    });
}

// Bundles the built workflows (dist/workflows/index.js) once, at build time, into dist/workflows/bundle.js, which
// the CPU worker of the build loads (`workflowBundle`) instead of bundling them with webpack at every start: a worker
// then starts in a second or two rather than ten or more, which a restarted worker (a crash, `gymflow dev`, the
// cluster) waits for. Run by scripts/build.sh after tsc.
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import process from 'node:process';
import { bundleWorkflowCode } from '@temporalio/worker';

/** Webpack's warnings and errors, on stderr; its progress is left out. */
const say = (message, meta) => process.stderr.write(`${message}${meta === undefined ? '' : ` ${JSON.stringify(meta)}`}\n`);

const [workflowsPath, out] = process.argv.slice(2);
if (!workflowsPath || !out) {
  process.stderr.write('usage: node scripts/bundle-workflows.mjs WORKFLOWS_INDEX_JS OUT_JS\n');
  process.exit(2);
}
const { code } = await bundleWorkflowCode({ workflowsPath: resolve(workflowsPath), logger: { log() {}, trace() {}, debug() {}, info() {}, warn: say, error: say } });
await writeFile(out, code);

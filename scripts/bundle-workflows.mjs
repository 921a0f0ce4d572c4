// Bundles the built workflows (dist/workflows/index.js) once, at build time, into dist/workflows/bundle.js, which
// the CPU worker of the build loads (`workflowBundle`) instead of bundling them with webpack at every start: a worker
// then starts in a second or two rather than ten or more, which a restarted worker (a crash, `gymflow dev`, the
// cluster) waits for. Run by scripts/build.sh after tsc.
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';

const [workflowsPath, out] = process.argv.slice(2);
if (!workflowsPath || !out) {
  console.error('usage: node scripts/bundle-workflows.mjs WORKFLOWS_INDEX_JS OUT_JS');
  process.exit(2);
}
const { code } = await bundleWorkflowCode({ workflowsPath: resolve(workflowsPath), logger: { log() {}, trace() {}, debug() {}, info() {}, warn: console.warn, error: console.error } });
await writeFile(out, code);

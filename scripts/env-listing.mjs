// Writes the listing `gymflow envs` prints (dist/src/cli/commands/envs-listing.json): the built-in environments as
// the build registers them, each made once with its default kwargs for its tools and task counts
// (`environmentRows`), so that the command lists them without importing them. Run by scripts/build.sh after tsc, on
// the build it lists; without GYMFLOW_OPENENV, whose servers `gymflow envs` registers and describes at run time.
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import process from 'node:process';

const { OPENENV_VARIABLE } = await import('../dist/src/envs/openenv/variable.js');
delete process.env[OPENENV_VARIABLE];
const { registerBuiltinEnvs } = await import('../dist/src/envs/register.js');
const { environmentRows, ENV_LISTING_FILE } = await import('../dist/src/cli/commands/envs.js');

registerBuiltinEnvs();
const rows = await environmentRows();
await writeFile(ENV_LISTING_FILE, `${JSON.stringify({ generatedBy: 'scripts/env-listing.mjs', rows }, null, 1)}\n`);
process.stderr.write(`${fileURLToPath(ENV_LISTING_FILE)}: ${rows.length} environments\n`);

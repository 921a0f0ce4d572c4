#!/usr/bin/env node
// The gymflow command: the built CLI under dist/ (`npm run build`; setup builds it). In a clone (src/ beside
// dist/) a build older than its sources is refused, naming the command that rebuilds it, rather than running
// old code; an installed package has no sources and runs its build as it is.
import { existsSync } from 'node:fs';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';
import { BUILD_STAMP, staleBuildInput } from './build-freshness.js';

const root = fileURLToPath(new URL('..', import.meta.url));
if (existsSync(fileURLToPath(new URL('../src/', import.meta.url)))) {
  const stale = staleBuildInput(root);
  if (stale !== undefined) {
    process.stderr.write(stale === BUILD_STAMP ? 'gymflow: no build in dist/: run `npm run build`\n' : `gymflow: dist/ is older than ${stale}: run \`npm run build\`\n`);
    process.exit(1);
  }
}
await import('../dist/src/cli/main.js');

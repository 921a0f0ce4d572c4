#!/usr/bin/env node
// The gymflow command: the built CLI under dist/ (`npm run build`; setup builds it). In a clone (src/ beside
// dist/) a build older than its sources is refused, naming the command that rebuilds it, rather than running
// old code; an installed package has no sources and runs its build as it is.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';

if (existsSync(fileURLToPath(new URL('../src/', import.meta.url)))) {
  const check = spawnSync('bash', [fileURLToPath(new URL('../scripts/build.sh', import.meta.url)), '--check'], { stdio: ['ignore', 'ignore', 'inherit'] });
  if (check.status !== 0) process.exit(check.status ?? 1);
}
await import('../dist/src/cli/main.js');

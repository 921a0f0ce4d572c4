#!/usr/bin/env node
// The gymflow command. Sources are TypeScript run through tsx's loader, so a fresh clone needs no build.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');

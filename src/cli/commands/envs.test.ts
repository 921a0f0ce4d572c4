import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { builtListing, ENV_LISTING_FILE } from './envs.js';

const dir = mkdtempSync(join(tmpdir(), 'gymflow-envs-listing-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the build's listing of the environments", () => {
  const row = { id: 'gymflow/text-math-v0', domain: 'math', maxSteps: 10, agents: ['random', 'expert'], description: 'd', tools: ['think', 'submit'], trainTasks: 200, heldoutTasks: 100 };

  it('is read from its file unless GYMFLOW_OPENENV names a server, and is absent beside the sources', () => {
    const file = join(dir, 'listing.json');
    writeFileSync(file, JSON.stringify({ generatedBy: 'test', rows: [row] }));
    expect(builtListing({}, file)).toEqual([row]);
    expect(builtListing({ GYMFLOW_OPENENV: '  ' }, file)).toEqual([row]);
    expect(builtListing({ GYMFLOW_OPENENV: 'counter=http://127.0.0.1:8000' }, file)).toBeUndefined();
    expect(builtListing({}, join(dir, 'none.json'))).toBeUndefined();
    // The sources have no listing: only the build writes one (scripts/env-listing.mjs).
    expect(ENV_LISTING_FILE.pathname).toMatch(/\/src\/cli\/commands\/envs-listing\.json$/);
    expect(builtListing({})).toBeUndefined();
  });

  it('names the file and what is wrong with it', () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{"rows": [');
    expect(() => builtListing({}, bad)).toThrow(new RegExp(`^${bad}: not JSON \\(.*\\): rebuild with \`npm run build\`$`));
    writeFileSync(bad, '{"rows": {}}');
    expect(() => builtListing({}, bad)).toThrow(`${bad}: $.rows: not an array of rows: rebuild with \`npm run build\``);
    writeFileSync(bad, 'null');
    expect(() => builtListing({}, bad)).toThrow(`${bad}: $.rows: not an array of rows`);
  });
});

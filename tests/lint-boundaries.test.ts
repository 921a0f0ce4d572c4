import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../src/core/package-root.js';

// The import-boundary rule of eslint.config.js (docs/ARCHITECTURE.md §2, "Import boundaries") on deliberately
// wrong imports: the real config, linting snippets as if they were files of the named folders. The probe files
// do not exist, so type-aware linting (which needs them in the TypeScript project) is switched off here; the
// boundary rule needs no types. `npm run lint` checks the real tree with everything on.
const eslint = new ESLint({ cwd: PACKAGE_ROOT, overrideConfig: tseslint.configs.disableTypeChecked });

async function ruleErrors(ruleId: string, filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? []).filter((m) => m.ruleId === ruleId).map((m) => m.message);
}

const boundaryErrors = (filePath: string, code: string): Promise<string[]> => ruleErrors('@typescript-eslint/no-restricted-imports', filePath, code);

describe('import boundaries', () => {
  it.each([
    ['src/core importing src/hub', 'src/core/probe.ts', "import { collect } from '../hub/collect.js';\nexport const x = collect;\n", /src\/core must not import src\/hub/],
    ['a workflow importing a Node built-in', 'workflows/probe.ts', "import { readFile } from 'node:fs/promises';\nexport const x = readFile;\n", /must not use Node built-ins/],
    ['a workflow importing src/runtime', 'workflows/probe.ts', "import { startDevServer } from '../src/runtime/dev-server.js';\nexport const x = startDevServer;\n", /workflows must not import src\/runtime/],
    ['a workflow importing activity code', 'workflows/probe.ts', "import { train } from '../activities/train.js';\nexport const x = train;\n", /activities only as types/],
    ['src/policy importing src/hub (the old cycle), from a subfolder', 'src/policy/sub/probe.ts', "import { collect } from '../../hub/collect.js';\nexport const x = collect;\n", /src\/policy must not import src\/hub/],
    ['src/loop importing src/hub', 'src/loop/probe.ts', "export { ArtifactStore } from '../hub/store/store.js';\n", /src\/loop must not import src\/hub/],
    ['src/sandbox importing src/envs (a lower part importing a higher one)', 'src/sandbox/probe.ts', "import { registerBuiltinEnvs } from '../envs/register.js';\nexport const x = registerBuiltinEnvs;\n", /src\/sandbox must not import src\/envs/],
    ['production code importing tests/', 'src/hub/probe.ts', "import { PACKAGE_ROOT } from '../../tests/support/temporal.js';\nexport const x = PACKAGE_ROOT;\n", /must not import tests\//],
  ])('fails on %s', async (_what, filePath, code, message) => {
    const errors = await boundaryErrors(filePath, code);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(message);
  });

  it.each([
    ['src/envs importing src/sandbox and src/core', 'src/envs/sandbox/probe.ts', "import { Sandbox } from '../../../sandbox/sandbox.js';\nimport { make } from '../../../core/registry.js';\nexport const x = [Sandbox, make];\n"],
    ['a workflow importing src/loop, @temporalio/workflow and activity types', 'workflows/probe.ts', "import { proxyActivities } from '@temporalio/workflow';\nimport type { PipelineActivities } from '../activities/index.js';\nimport { planShards } from '../src/loop/plan.js';\nexport const x = [proxyActivities<PipelineActivities>, planShards];\n"],
    ['a test crossing parts', 'src/policy/probe.test.ts', "import { collect } from '../hub/collect.js';\nexport const x = collect;\n"],
  ])('allows %s', async (_what, filePath, code) => {
    expect(await boundaryErrors(filePath, code)).toEqual([]);
  });
});

// The optional-field rule of eslint.config.js: `...(x === undefined ? {} : { x })` is written `...defined({ x })`
// (src/core/defined.ts).
describe('optional-field spreads', () => {
  const spreadErrors = (filePath: string, code: string): Promise<string[]> => ruleErrors('no-restricted-syntax', filePath, code);
  const fn = (body: string): string => `import { defined } from '../core/defined.js';\nexport function f(x: string | undefined, y: number | undefined) {\n  return ${body};\n}\n`;

  it.each([
    ['`=== undefined ? {} : { x }`', 'src/hub/probe.ts', fn('{ a: 1, ...(x === undefined ? {} : { x }) }')],
    ['`!== undefined ? { key: x } : {}`', 'src/hub/probe.ts', fn('{ a: 1, ...(y !== undefined ? { why: y } : {}) }')],
    ['a value computed from the tested one, `undefined` on the left', 'workflows/probe.ts', fn('{ ...(undefined === x ? {} : { n: x.length }) }')],
    ['one in a test file', 'src/hub/probe.test.ts', fn('{ ...(x === undefined ? {} : { x }) }')],
  ])('fails on %s', async (_what, filePath, code) => {
    const errors = await spreadErrors(filePath, code);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/defined\(\{ key: x \}\).*src\/core\/defined\.ts/);
  });

  it.each([
    ['`...defined({ ... })`', fn('{ a: 1, ...defined({ x, why: y }) }')],
    ['several fields present together on one condition', fn('{ ...(x === undefined ? {} : { x, y }) }')],
    ['a field set when the value is missing', fn('{ ...(x === undefined ? { skipped: true } : {}) }')],
    ['a compound condition', fn('{ ...(x !== undefined && y !== undefined ? { x } : {}) }')],
    ['a test that is not on `undefined`', fn("{ ...(x === '' ? {} : { x }), ...(y !== null ? { y } : {}) }")],
    ['a conditional object that is not spread', fn('x === undefined ? {} : { x }')],
  ])('allows %s', async (_what, code) => {
    expect(await spreadErrors('src/hub/probe.ts', code)).toEqual([]);
  });
});

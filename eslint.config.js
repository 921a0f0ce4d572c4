// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

// Import boundaries (docs/ARCHITECTURE.md §2). The parts of src/ from the ground up, and what each may
// import; anything not listed (a part above it, a sibling) is an error. Test files and fixtures may cross.
const SRC_PARTS = ['core', 'sandbox', 'recorder', 'reward', 'policy', 'envs', 'hub', 'eval', 'loop', 'runtime', 'cli'];
/** @type {Record<string, string[]>} */
const SRC_MAY_IMPORT = {
  core: [],
  sandbox: ['core'],
  recorder: ['core'],
  reward: ['core'],
  policy: ['core'],
  // The question-answering env grades with the reward part's answer judge (src/envs/qa/grading.ts).
  envs: ['core', 'sandbox', 'reward'],
  hub: ['core', 'envs', 'reward'],
  eval: ['core', 'hub'],
  // Workflow-safe: workflows import it, so it stands on core alone.
  loop: ['core'],
  runtime: ['core', 'hub', 'loop'],
  cli: SRC_PARTS,
};
const TEST_FILES = ['**/*.test.ts', '**/__fixtures__/**'];

const escape = (/** @type {string} */ s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** A specifier that reaches src/<part> from inside src/ (`../hub/…`, `../../src/hub/…`) or from a top-level folder. */
const srcPart = (/** @type {string} */ part) => `^(?:(?:\\.\\./)+(?:src/)?|gymflow/src/)${escape(part)}(?:/|$)`;
/** A specifier that reaches the top-level folder `dir`. */
const topDir = (/** @type {string} */ dir, except = '') => `^(?:(?:\\.\\./)+|gymflow/)${escape(dir)}(?:/${except}|$)`;

/**
 * One `@typescript-eslint/no-restricted-imports` entry (flat config replaces a rule's options for the files a
 * later block matches, so each folder gets one entry holding all of its restrictions).
 *
 * @param {string[]} files
 * @param {{ regex: string, message: string, allowTypeImports?: boolean }[]} patterns
 * @param {{ name: string, message: string, allowTypeImports?: boolean }[]} [paths]
 */
function boundary(files, patterns, paths = []) {
  return {
    files,
    ignores: TEST_FILES,
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { paths, patterns: patterns.map((p) => ({ caseSensitive: true, ...p })) }] },
  };
}

const notFromProduction = (/** @type {string} */ who) =>
  ['tests', 'bench', 'scripts'].map((dir) => ({ regex: topDir(dir), message: `${who} must not import ${dir}/ (test and benchmark code stays out of production code)` }));

const workflowBuiltins = nodeBuiltins.map((name) => ({ name, message: 'workflows (and src/loop, which they import) must not use Node built-ins: workflow code is replayed deterministically, no I/O' }));

const srcBoundaries = SRC_PARTS.map((part) => {
  const allowed = new Set([part, ...SRC_MAY_IMPORT[part] ?? []]);
  const who = `src/${part}`;
  const may = (SRC_MAY_IMPORT[part] ?? []).map((p) => `src/${p}`).join(', ');
  const rule = may === '' ? `${who} is the ground: it imports no other part` : `${who} may import ${may}`;
  return boundary(
    [`src/${part}/**/*.ts`],
    [
      ...SRC_PARTS.filter((p) => !allowed.has(p)).map((p) => ({ regex: srcPart(p), message: `${who} must not import src/${p}: ${rule} (docs/ARCHITECTURE.md §2, "Import boundaries")` })),
      // The CLI is a Temporal client: it imports the workflows' messages and signals.
      ...['workflows', 'activities', 'workers']
        .filter((dir) => part !== 'cli' || dir === 'workers')
        .map((dir) => ({ regex: topDir(dir), message: `${who} must not import ${dir}/: src/ is below the Temporal layer` })),
      ...notFromProduction(who),
    ],
    part === 'loop' ? workflowBuiltins : [],
  );
});

// An optional field goes through `defined()` (src/core/defined.ts): `...defined({ x })`, not
// `...(x === undefined ? {} : { x })` or `...(x !== undefined ? { x } : {})`. Flagged: a spread of a one-field
// object or `{}` on an `undefined` test. Several fields present together on one condition, and compound conditions,
// stay as they are. Everywhere, tests too (they had a handful). A later block that sets `no-restricted-syntax`
// replaces these options for its files (flat config), so it must repeat this entry.
const ONE_FIELD = (/** @type {string} */ side) => `[${side}.type='ObjectExpression'][${side}.properties.length=1][${side}.properties.0.type='Property']`;
const EMPTY = (/** @type {string} */ side) => `[${side}.type='ObjectExpression'][${side}.properties.length=0]`;
const optionalFieldSpread = {
  selector: [
    'SpreadElement > ConditionalExpression.argument[test.type="BinaryExpression"]',
    // (`.type` too: a missing attribute reads as the string "undefined" to esquery)
    ':matches([test.right.type="Identifier"][test.right.name="undefined"], [test.left.type="Identifier"][test.left.name="undefined"])',
    `:matches([test.operator="==="]${EMPTY('consequent')}${ONE_FIELD('alternate')}, [test.operator="!=="]${ONE_FIELD('consequent')}${EMPTY('alternate')})`,
  ].join(''),
  message:
    'optional field: write `...defined({ key: x })` (src/core/defined.ts drops undefined-valued keys) instead of `...(x === undefined ? {} : { key: x })`; for a value computed from x, `key: x === undefined ? undefined : f(x)`',
};

export default tseslint.config(
  { ignores: ['node_modules/', '.gymflow/', '.venv/', 'dist/', 'trainer/', 'coverage/', 'eslint.config.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: { projectService: { allowDefaultProject: ['bin/*.js', 'scripts/*.mjs'] }, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': ['error', optionalFieldSpread],
    },
  },
  ...srcBoundaries,
  // Workflow code is replayed deterministically inside the Temporal sandbox: no Node built-ins, no I/O, no
  // runtime code. It imports @temporalio/workflow, src/loop (and pure helpers of src/core), and activities
  // only as types (`import type`, erased before bundling).
  boundary(
    // The tests' own workflows (tests/support/*-workflow.ts) are bundled and replayed the same way.
    ['workflows/**/*.ts', 'tests/support/*-workflow.ts'],
    [
      ...SRC_PARTS.filter((p) => p !== 'loop' && p !== 'core').map((p) => ({ regex: srcPart(p), message: `workflows must not import src/${p}: they may import src/loop, src/core and @temporalio/workflow` })),
      { regex: topDir('activities'), allowTypeImports: true, message: 'workflows import activities only as types (import type): activity code runs on workers, not in the workflow sandbox' },
      { regex: topDir('workers'), message: 'workflows must not import workers/' },
      ...notFromProduction('workflows'),
    ],
    [
      ...workflowBuiltins,
      ...['@temporalio/activity', '@temporalio/client', '@temporalio/worker', '@temporalio/testing'].map((name) => ({ name, allowTypeImports: true, message: `workflows must not import ${name} (only @temporalio/workflow and @temporalio/common run in the workflow sandbox)` })),
    ],
  ),
  boundary(
    ['activities/**/*.ts'],
    [
      // workflows/messages.ts holds the signal and query definitions, the workflows' public interface, which
      // activities signal (stage_progress) as clients do.
      { regex: topDir('workflows', '(?!messages(?:\\.js)?$)'), message: 'activities must not import workflow code (workflows/messages.js, the signal and query definitions, is the exception)' },
      { regex: topDir('workers'), message: 'activities must not import workers/' },
      ...notFromProduction('activities'),
    ],
  ),
  boundary(['workers/**/*.ts'], notFromProduction('workers')),
);

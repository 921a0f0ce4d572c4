// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

export default tseslint.config(
  { ignores: ['node_modules/', '.gymflow/', '.venv/', 'dist/', 'trainer/', 'coverage/', 'eslint.config.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: { projectService: { allowDefaultProject: ['bin/*.js'] }, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Workflow code is replayed deterministically inside the Temporal sandbox: no Node built-ins, no I/O. The
    // same holds for src/loop, the workflow-safe part that workflows import, and for the tests' own workflows.
    files: ['workflows/**/*.ts', 'src/loop/**/*.ts', 'tests/support/*-workflow.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: nodeBuiltins.map((name) => ({ name, message: 'workflows must not use Node built-ins' })) }],
    },
  },
);

/**
 * What the loop runs on: the Temporal dev server and CLI, the trainer's processes, policy serving, the
 * workspace and run directories, TensorBoard files, configuration files. Processes and files, never imported
 * by a workflow (the workflow-safe part is `src/loop`).
 */
export * from './config-file.js';
export * from './dev-server.js';
export * from './run-dir.js';
export * from './serve.js';
export * from './temporal-cli.js';
export * from './tensorboard.js';
export * from './trainer-process.js';
export * from './workspace.js';
export * from './cluster/index.js';

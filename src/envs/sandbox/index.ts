export * from './env.js';
export * from './expert.js';
export * from './grading.js';
export * from './patch.js';
export * from './tasks.js';
export * from './tools.js';
export * from './workspace.js';
export * from './register.js';

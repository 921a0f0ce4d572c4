export * from './env.js';
export * from './expert.js';
export * from './tasks.js';

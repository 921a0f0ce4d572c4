export * from './env.js';
export * from './expert.js';
export * from './facts.js';
export * from './participant.js';
export * from './scenarios.js';
export * from './tasks.js';
export * from './tools.js';

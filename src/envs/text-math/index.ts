export * from './answer.js';
export * from './env.js';
export * from './expert.js';
export * from './expression.js';
export * from './fraction.js';
export * from './problems.js';
export * from './tasks.js';

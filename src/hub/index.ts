export * from './collect.js';
export * from './errors.js';
export * from './export/index.js';
export * from './pool.js';
export * from './scheduler.js';
export * from './seeds.js';
export * from './store/index.js';

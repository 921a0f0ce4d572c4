export * from './admissible.js';
export * from './env.js';
export * from './expert.js';
export * from './goal.js';
export * from './planner.js';
export * from './tasks.js';
export * from './tools.js';
export * from './world.js';

export * from './config.js';
export * from './plan.js';
export * from './search-attributes.js';
export * from './status.js';
export * from './trainer-process.js';
export * from './workspace.js';

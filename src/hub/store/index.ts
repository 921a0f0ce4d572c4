export * from './atomic.js';
export * from './layout.js';
export * from './manifests.js';
export * from './store.js';
export * from './stream.js';
export * from './trajectory-set.js';
export * from './tree.js';

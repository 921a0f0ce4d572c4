export * from './profile.js';
export * from './registry.js';

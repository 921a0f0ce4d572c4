export * from './episode-statistics.js';
export * from './max-steps.js';
export * from './order-enforcing.js';
export * from './recorder.js';
export * from './reward.js';
export * from './timeout.js';
export * from './wrapper.js';

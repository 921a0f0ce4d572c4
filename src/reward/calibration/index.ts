export * from './agreement.js';
export * from './fit.js';
export * from './isotonic.js';
export * from './labels.js';
export * from './pairing.js';

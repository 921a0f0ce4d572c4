export * from './anthropic.js';
export * from './local.js';
export * from './openai.js';
export * from './random.js';
export * from './sampling.js';
export * from './specs.js';
export * from './usage.js';

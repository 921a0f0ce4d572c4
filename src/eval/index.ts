export * from './compare.js';
export * from './evaluate.js';
export * from './format.js';
export * from './markdown.js';
export * from './metrics.js';
export * from './result.js';
export * from './summarize.js';
export * from './stats/index.js';

export * from './answer.js';
export * from './env.js';
export * from './grading.js';
export * from './questions.js';

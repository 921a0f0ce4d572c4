export * from './chatml.js';
export * from './prompt.js';
export * from './tool-lookup.js';

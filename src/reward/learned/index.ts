export * from './manifest.js';
export * from './onnx-reward-model.js';
export * from './step-input.js';

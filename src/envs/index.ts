export * as conversationKit from './conversation-kit/index.js';
export * as engineering from './engineering/index.js';
export * as household from './household/index.js';
export * as openenv from './openenv/index.js';
export * from './register.js';
export * as retail from './retail/index.js';
export * as textMath from './text-math/index.js';
export * as toolUse from './tool-use/index.js';
export * as webshop from './webshop/index.js';

#!/usr/bin/env node
// Runs the TypeScript CLI through tsx's loader, so the package works from source without a build step.
import { register } from 'tsx/esm/api';
register();
await import('../src/cli/index.ts');

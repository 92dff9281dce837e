#!/usr/bin/env node
// The command-line tool: token management and migrations. Built from src/cli/ by `npm run build`.
import { main } from '../dist/src/cli/main.js';

process.exitCode = await main(process.argv.slice(2));

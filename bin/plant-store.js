#!/usr/bin/env node
// The command-line tool (tokens, plants, webhooks, migrations): src/cli/, compiled by `npm run build`.
import { main } from '../dist/src/cli/main.js';

process.exitCode = await main(process.argv.slice(2));

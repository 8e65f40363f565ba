#!/usr/bin/env node
import { endQuietlyOnClosedPipes } from './closed-pipe.js';
import { capYoungGeneration, limitHeapGrowth } from './heap-growth.js';

// Before the commands' modules load: loading them is the process's first burst of allocations.
limitHeapGrowth();
capYoungGeneration();
endQuietlyOnClosedPipes();
const { run } = await import('./program.js');
process.exitCode = await run(process.argv.slice(2));
// Every command has closed what it opened by now, and the process ends as soon as nothing is left
// pending. A handle a library leaves behind (a reconnection timer of a connection to a server that
// died) must not keep a finished `sync --once` alive, blocking the next scheduled one: last resort.
setTimeout(() => process.exit(), 5_000).unref();

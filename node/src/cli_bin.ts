#!/usr/bin/env node
/**
 * The `palimpsest` bin of the npm package: runs the CLI on the process's
 * arguments and exits with its code.
 *
 * @module
 */
import process from "node:process";
import { processIo, runCli } from "./main.ts";

process.exit(await runCli(process.argv.slice(2), processIo()));

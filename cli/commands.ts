/**
 * The commands of the command line, in the order `--help` lists them.
 *
 * @module
 */
import type { Command } from "./outcome.ts";
import { migrateCommand } from "./commands/migrate.ts";
import { verifyCommand } from "./commands/verify.ts";
import { deriveCommand } from "./commands/derive.ts";
import { statsCommand } from "./commands/stats.ts";
import { repairCommand } from "./commands/repair.ts";
import { explainCommand } from "./commands/explain.ts";
import { droppedCommand } from "./commands/dropped.ts";
import { schemaCommand } from "./commands/schema.ts";
import { importCommand } from "./commands/import.ts";
import { copyCommand } from "./commands/copy.ts";
import { exportCommand } from "./commands/export.ts";
import { bundleCommand } from "./commands/bundle.ts";
import { unbundleCommand } from "./commands/unbundle.ts";
import { viewCommand } from "./commands/view.ts";
import { listCommand } from "./commands/list.ts";
import { rmCommand } from "./commands/rm.ts";
import { titleCommand } from "./commands/title.ts";
import { tagCommand } from "./commands/tag.ts";
import { branchesCommand } from "./commands/branches.ts";
import { rewindCommand } from "./commands/rewind.ts";

/** Every command. */
export const commands: ReadonlyArray<Command> = [
  verifyCommand,
  deriveCommand,
  statsCommand,
  explainCommand,
  droppedCommand,
  branchesCommand,
  rewindCommand,
  migrateCommand,
  importCommand,
  exportCommand,
  copyCommand,
  bundleCommand,
  unbundleCommand,
  listCommand,
  titleCommand,
  tagCommand,
  rmCommand,
  viewCommand,
  repairCommand,
  schemaCommand,
];

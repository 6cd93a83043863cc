/**
 * A throwaway machine layout for sandbox tests: a home directory with a
 * secret file beside the Fermix home, a workspace with SOUL.md and skills/,
 * and folders outside the home to grant. The sandbox policy is built the way
 * the daemon builds it, from a real SandboxStore.
 */

import type { Database } from "bun:sqlite";
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildPolicy, type SandboxPolicy } from "../../../src/agent/sandbox/policy.ts";
import { openDatabase } from "../../../src/store/db.ts";
import { SandboxStore } from "../../../src/store/sandbox.ts";

export interface Machine {
  root: string;
  /** $HOME */
  home: string;
  fermixHome: string;
  workspace: string;
  /** A file in $HOME, outside the workspace. */
  secretFile: string;
  secretText: string;
  /** Folders outside $HOME. */
  outsideRo: string;
  outsideRw: string;
  db: Database;
  store: SandboxStore;
  policy(daemonEnv?: Record<string, string | undefined>, networkDefault?: boolean): SandboxPolicy;
  cleanup(): void;
}

export function makeMachine(): Machine {
  // Outside /tmp where the machine has /var/tmp: a command's own /tmp is private, and the home must not hide in it.
  const root = realpathSync(mkdtempSync(join(existsSync("/var/tmp") ? "/var/tmp" : tmpdir(), "fermix-sbx-")));
  const home = join(root, "home");
  const fermixHome = join(home, ".fermix");
  const workspace = join(fermixHome, "workspace");
  mkdirSync(join(workspace, "skills"), { recursive: true });
  writeFileSync(join(workspace, "SOUL.md"), "# Soul\n");
  writeFileSync(join(workspace, "notes.txt"), "hello from the workspace\n");
  writeFileSync(join(fermixHome, "config.toml"), 'bot_token = "not-for-commands"\n');
  const secretText = "the-owner-private-diary-7781";
  const secretFile = join(home, "diary.txt");
  writeFileSync(secretFile, secretText);
  const outsideRo = join(root, "data-ro");
  const outsideRw = join(root, "data-rw");
  mkdirSync(outsideRo);
  mkdirSync(outsideRw);
  writeFileSync(join(outsideRo, "report.txt"), "quarterly numbers\n");
  const db = openDatabase(join(root, "test.db"));
  const store = new SandboxStore(db);
  return {
    root,
    home,
    fermixHome,
    workspace,
    secretFile,
    secretText,
    outsideRo,
    outsideRw,
    db,
    store,
    policy: (daemonEnv = {}, networkDefault = false) =>
      buildPolicy({ state: store.state(), networkDefault, workspace, fermixHome, homeDir: home, daemonEnv, exists: existsSync }),
    cleanup() {
      db.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

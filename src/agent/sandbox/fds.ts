/**
 * Data handed to bubblewrap through file descriptors (its generated
 * /etc files and the seccomp filter). Bun.spawn passes descriptors beyond
 * stdin, stdout and stderr as further `stdio` entries, numbered from 3 in
 * the child; it takes no bytes there, so each payload is written to a file
 * in a fresh private (0700) temporary folder, opened read-only and unlinked
 * at once: nothing of it outlives the open descriptor, and no other process
 * can swap it. The caller closes the descriptors once the child has them
 * (Bun.spawn has duplicated them by the time it returns).
 */
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DATA_FILES, type DataFds, type DataFile } from "./bwrap.ts";

/** The first descriptor number past stdin, stdout and stderr. */
export const FIRST_EXTRA_FD = 3;

export interface OpenedData {
  /** The descriptors in this process, in `DATA_FILES` order: the extra `stdio` entries. */
  stdio: number[];
  /** Their numbers in the child. */
  fds: DataFds;
  close(): void;
}

/** Open each data file as an unlinked read-only descriptor. */
export function openDataFiles(contents: Record<DataFile, string | Uint8Array>): OpenedData {
  const dir = mkdtempSync(join(tmpdir(), "fermix-bwrap-"));
  const stdio: number[] = [];
  const close = () => {
    for (const fd of stdio.splice(0)) closeSync(fd);
  };
  try {
    for (const name of DATA_FILES) {
      const path = join(dir, name);
      writeFileSync(path, contents[name], { mode: 0o600 });
      stdio.push(openSync(path, "r"));
      rmSync(path);
    }
  } catch (error) {
    close();
    throw error;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const fds = Object.fromEntries(DATA_FILES.map((name, i) => [name, FIRST_EXTRA_FD + i])) as Record<DataFile, number>;
  return { stdio: [...stdio], fds, close };
}

/**
 * SOUL.md on disk: read cheaply on every turn (re-read only when the file's
 * stat changes, so an edit by hand shows up at the next turn without a
 * restart), written atomically (a temp file in the same folder, then a
 * rename, mode 0600) so a turn never reads half a persona.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, type Stats, statSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";

/** What identifies one version of the file without reading it: an atomic write changes the inode, an edit in place the times or size. */
const fingerprint = (s: Stats) => `${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`;

export interface SoulRead {
  text: string;
  /** False when the text is the same version as the previous read (nothing to compare). */
  changed: boolean;
}

export class SoulFile {
  private cached: { fingerprint: string; text: string } | null = null;

  constructor(readonly path: string) {}

  /** Whether the file is there at all. */
  exists(): boolean {
    try {
      statSync(this.path);
      return true;
    } catch {
      return false;
    }
  }

  /** The file's text; throws ENOENT when it is missing. Read from disk only when it changed since the last read or write. */
  read(): SoulRead {
    const stat = statSync(this.path);
    const print = fingerprint(stat);
    if (this.cached?.fingerprint === print) return { text: this.cached.text, changed: false };
    const text = readFileSync(this.path, "utf8");
    this.cached = { fingerprint: print, text };
    return { text, changed: true };
  }

  /** Replace the file's content atomically, owner-only; later reads see the new text without reading it back. */
  write(text: string): void {
    const dir = dirname(this.path);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const temp = join(dir, `.${basename(this.path)}.${process.pid}.${Date.now()}.tmp`);
    try {
      const fd = openSync(temp, "wx", 0o600);
      try {
        writeSync(fd, text);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(temp, this.path);
    } catch (error) {
      rmSync(temp, { force: true });
      throw error;
    }
    this.cached = { fingerprint: fingerprint(statSync(this.path)), text };
  }
}

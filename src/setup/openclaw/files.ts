/**
 * How the importer reads an OpenClaw home: files by absolute path and the
 * entries of a folder, through one small interface so the planning steps
 * stay pure (tests hand in the fixtures on disk, or a map). Reading never
 * follows a symbolic link out of a skill folder and never reads a file
 * larger than `MAX_FILE_BYTES`: an OpenClaw home is the owner's, but a
 * runaway file should fail one row, not the import.
 */
import { lstatSync, readdirSync, readFileSync } from "node:fs";
import { describeError } from "../../kernel/errors.ts";

/** The largest file read (bytes): a workspace file, a skill's script, a token file. */
export const MAX_FILE_BYTES = 1024 * 1024;

export type FileRead = { kind: "ok"; bytes: Uint8Array; executable?: boolean } | { kind: "missing" } | { kind: "unreadable"; reason: string };

export interface HomeFiles {
  read(path: string): FileRead;
  /** A folder's regular files and sub-folders by name, sorted; empty when it is missing. Links are neither. */
  list(dir: string): { files: string[]; dirs: string[] };
}

/** A file's text, or undefined when it is missing or unreadable. */
export function textOf(read: FileRead): string | undefined {
  return read.kind === "ok" ? new TextDecoder().decode(read.bytes) : undefined;
}

/** The files on disk. */
export const diskFiles: HomeFiles = {
  read(path) {
    try {
      const stat = lstatSync(path);
      if (stat.isSymbolicLink()) return { kind: "unreadable", reason: "it is a symbolic link" };
      if (!stat.isFile()) return { kind: "unreadable", reason: "it is not a regular file" };
      if (stat.size > MAX_FILE_BYTES) return { kind: "unreadable", reason: `it is larger than ${MAX_FILE_BYTES / 1024 / 1024} MB` };
      return { kind: "ok", bytes: new Uint8Array(readFileSync(path)), executable: (stat.mode & 0o100) !== 0 };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return { kind: "missing" };
      return { kind: "unreadable", reason: describeError(error) };
    }
  },
  list(dir) {
    try {
      const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name));
      return {
        files: entries.filter((e) => e.isFile()).map((e) => e.name),
        dirs: entries.filter((e) => e.isDirectory()).map((e) => e.name),
      };
    } catch {
      return { files: [], dirs: [] };
    }
  },
};

/** An in-memory home for tests: absolute path → text. */
export function memoryFiles(entries: Readonly<Record<string, string>>): HomeFiles {
  const encoder = new TextEncoder();
  return {
    read: (path) => (entries[path] === undefined ? { kind: "missing" } : { kind: "ok", bytes: encoder.encode(entries[path]) }),
    list(dir) {
      const prefix = dir.endsWith("/") ? dir : `${dir}/`;
      const files = new Set<string>();
      const dirs = new Set<string>();
      for (const path of Object.keys(entries)) {
        if (!path.startsWith(prefix)) continue;
        const [head, ...rest] = path.slice(prefix.length).split("/");
        (rest.length === 0 ? files : dirs).add(head!);
      }
      return { files: [...files].sort(), dirs: [...dirs].sort() };
    },
  };
}

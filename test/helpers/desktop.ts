/**
 * What tests of computer use look at from outside the daemon: the processes
 * of its desktop sessions (found through /proc by the session folders under
 * the home, which every one of them names in its command line or its
 * environment), the PNG screenshots the model and the owner were given,
 * read independently of the code under test, and the config table.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { tomlTable } from "./config.ts";

/** Processes (pid and command) whose command line or environment names `<home>/desktop/`. */
export function desktopProcesses(home: string): Array<{ pid: number; command: string }> {
  const marker = `${join(home, "desktop")}/`;
  const found: Array<{ pid: number; command: string }> = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, "latin1");
      const environ = readFileSync(`/proc/${name}/environ`, "latin1");
      // A zombie has neither: it is gone in all but name.
      if (cmdline === "") continue;
      if (cmdline.includes(marker) || environ.includes(marker)) found.push({ pid: Number(name), command: cmdline.split("\0")[0]! });
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** The bytes of a `data:image/png;base64,…` URL. */
export function dataUrlBytes(url: string): Uint8Array {
  const match = /^data:image\/png;base64,(.+)$/.exec(url);
  if (!match) throw new Error(`not a PNG data URL: ${url.slice(0, 40)}…`);
  return new Uint8Array(Buffer.from(match[1]!, "base64"));
}

/** The size a PNG declares in its IHDR chunk; throws when the bytes are not a PNG. */
export function pngDimensions(bytes: Uint8Array): { width: number; height: number } {
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const buffer = Buffer.from(bytes);
  if (!buffer.subarray(0, 8).equals(signature) || buffer.toString("latin1", 12, 16) !== "IHDR") throw new Error("not a PNG");
  return { width: buffer.readUInt32BE(16), height: buffer.readUInt32BE(20) };
}

export interface ComputerOptions {
  enabled?: boolean;
  width?: number;
  height?: number;
  maxActions?: number;
  idleMinutes?: number;
  start?: readonly string[];
}

/** A `[fermix_core.computer]` table: on, a small display, a terminal alone by default. */
export function computerToml(o: ComputerOptions = {}): string {
  return tomlTable("fermix_core.computer", {
    enabled: o.enabled ?? true,
    width: o.width ?? 640,
    height: o.height ?? 400,
    max_actions: o.maxActions,
    idle_minutes: o.idleMinutes,
    start: o.start ?? ["xterm -geometry 80x20+10+10"],
  });
}

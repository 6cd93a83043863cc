/**
 * Fake service-manager executables (systemctl, loginctl, journalctl,
 * launchctl, tail) in a directory to put first on PATH: each appends its
 * name and arguments to a log and answers like the real one for the few
 * queries Fermix makes. What they answer is set by files in the directory
 * (`is-active`, `linger`, `launchctl-state`).
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface FakeBin {
  dir: string;
  /** PATH with the fakes first. */
  path: string;
  /** Every call so far, one line each: `systemctl --user daemon-reload`. */
  calls(): string[];
  /** What `systemctl --user is-active` prints (default "inactive"). */
  setActive(state: string): void;
  /** What `loginctl show-user` says of lingering (default "no"). */
  setLinger(value: "yes" | "no"): void;
  cleanup(): void;
}

const SCRIPT = (name: string, body: string) => `#!/bin/sh
dir=$(dirname "$0")
echo "${name} $*" >> "$dir/calls.log"
${body}
`;

export function makeFakeBin(): FakeBin {
  const dir = mkdtempSync(join(tmpdir(), "fermix-fakebin-"));
  const write = (name: string, body: string) => {
    writeFileSync(join(dir, name), SCRIPT(name, body));
    chmodSync(join(dir, name), 0o755);
  };
  write(
    "systemctl",
    `case "$*" in
  *is-active*) state=$(cat "$dir/is-active" 2>/dev/null || echo inactive); echo "$state"; [ "$state" = active ];;
  *status*) echo "* fermix.service - Fermix personal AI assistant"; echo "     Active: $(cat "$dir/is-active" 2>/dev/null || echo inactive)";;
esac`,
  );
  write("loginctl", `echo "Linger=$(cat "$dir/linger" 2>/dev/null || echo no)"`);
  write("journalctl", `echo "Dec 01 12:00:00 host fermix[1]: level=info msg=\\"fermix listening\\""`);
  write(
    "launchctl",
    `case "$1" in
  print) [ -f "$dir/launchctl-state" ] || exit 113; echo "ai.fermix.daemon = {"; echo "	state = $(cat "$dir/launchctl-state")"; echo "}";;
esac`,
  );
  return {
    dir,
    path: `${dir}:${process.env.PATH ?? "/usr/bin:/bin"}`,
    calls: () => {
      try {
        return readFileSync(join(dir, "calls.log"), "utf8").trim().split("\n").filter(Boolean);
      } catch {
        return [];
      }
    },
    setActive: (state) => writeFileSync(join(dir, "is-active"), state),
    setLinger: (value) => writeFileSync(join(dir, "linger"), value),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

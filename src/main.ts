/**
 * The entry point, and the only file that touches the process: argv, signals,
 * the umask and the exit code.
 */
import { runCli } from "./cli/index.ts";
import { follow, writeFd } from "./kernel/stdio.ts";

// Everything Fermix creates (database, sockets, secrets) is for its owner only.
process.umask(0o077);

const shutdown = new AbortController();
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (shutdown.signal.aborted) process.exit(130);
    shutdown.abort(signal);
  });
}

// SIGHUP asks a running daemon to reload its config (`systemctl --user reload fermix`). It is
// caught only once a command listens for it: for the others it still ends the process (a closed terminal).
const reloadListeners = new Set<() => void>();
const onReload = (listener: () => void) => {
  if (reloadListeners.size === 0) {
    process.on("SIGHUP", () => {
      for (const listener of reloadListeners) listener();
    });
  }
  reloadListeners.add(listener);
};

runCli(process.argv.slice(2), {
  env: process.env,
  // Straight to the descriptors: building process.stdout costs more than `fermix --version` does in all (kernel/stdio.ts).
  stdout: (text) => writeFd(1, text),
  stderr: (text) => writeFd(2, text),
  get isTTY() {
    return Boolean(process.stdout.isTTY);
  },
  shutdown: shutdown.signal,
  terminal: () => {
    // readline and the prompts write through the streams from here on; so does everything else, in order.
    follow(1);
    follow(2);
    return { input: process.stdin, output: process.stdout };
  },
  onReload,
}).then(
  (code) => process.exit(code),
  (error) => {
    writeFd(2, `fermix: unexpected error: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);

/** What a subcommand may touch of the process, handed in by main.ts. */
export interface CliContext {
  env: Record<string, string | undefined>;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Whether stdout is a terminal (colour, prompts). */
  isTTY: boolean;
  /** Fires on SIGINT or SIGTERM. */
  shutdown: AbortSignal;
  /** The terminal streams, for line editing (`fermix chat`); opened on first use. */
  terminal: () => { input: NodeJS.ReadStream; output: NodeJS.WriteStream };
  /** Call `listener` on each reload request (SIGHUP). */
  onReload?: (listener: () => void) => void;
}

/** A subcommand module: parses its own arguments, returns the exit code. */
export interface Subcommand {
  main(args: string[], ctx: CliContext): Promise<number>;
}

/** A usage mistake: printed with a pointer to --help, exit code 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

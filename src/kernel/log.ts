/**
 * Structured logging: one logfmt line per event on stderr. The logger redacts
 * secrets itself — every registered secret value, and any field whose name
 * looks like a credential — so no caller can leak one by accident.
 */
import { writeFd } from "./stdio.ts";

export type LogLevel = "debug" | "info" | "warn" | "error";
export type LogFields = Record<string, unknown>;

const LEVEL_RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };
const SECRET_FIELD = /(token|secret|password|passwd|api_?key|authorization|cookie|signature)/i;
const REDACTED = "[redacted]";
/** Secrets shorter than this are not substring-redacted: they would shred ordinary words. */
const MIN_SECRET_LENGTH = 6;

export interface LogSink {
  write(line: string): void;
}

/** The set of secret values known to the process; shared by every child logger. */
export class Redactor {
  private readonly secrets = new Set<string>();

  add(...values: Array<string | undefined>): void {
    for (const value of values) {
      if (value && value.length >= MIN_SECRET_LENGTH) this.secrets.add(value);
    }
  }

  redact(text: string): string {
    let out = text;
    for (const secret of this.secrets) {
      if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    }
    return out;
  }
}

export class Logger {
  constructor(
    private readonly sink: LogSink,
    private readonly minLevel: LogLevel,
    readonly redactor: Redactor,
    private readonly bound: LogFields = {},
  ) {}

  /** A logger for one component; its fields are added to every line. */
  child(fields: LogFields): Logger {
    return new Logger(this.sink, this.minLevel, this.redactor, { ...this.bound, ...fields });
  }

  /** Whether lines at this level are written, to skip building fields nobody will see. */
  enabled(level: LogLevel): boolean {
    return LEVEL_RANK[level] >= LEVEL_RANK[this.minLevel];
  }

  debug(msg: string, fields?: LogFields): void {
    this.emit("debug", msg, fields);
  }
  info(msg: string, fields?: LogFields): void {
    this.emit("info", msg, fields);
  }
  warn(msg: string, fields?: LogFields): void {
    this.emit("warn", msg, fields);
  }
  error(msg: string, fields?: LogFields): void {
    this.emit("error", msg, fields);
  }

  private emit(level: LogLevel, msg: string, fields?: LogFields): void {
    if (LEVEL_RANK[level] < LEVEL_RANK[this.minLevel]) return;
    const all: LogFields = { ...this.bound, ...fields };
    let line = `ts=${new Date().toISOString()} level=${level} msg=${quote(msg)}`;
    for (const [key, value] of Object.entries(all)) {
      if (value === undefined) continue;
      const shown = SECRET_FIELD.test(key) && value !== null && value !== "" ? REDACTED : render(value);
      line += ` ${key}=${quote(shown)}`;
    }
    this.sink.write(`${this.redactor.redact(line)}\n`);
  }
}

function render(value: unknown): string {
  if (value instanceof Error) return value.message;
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean" || value === null) return String(value);
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

function quote(value: string): string {
  return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
}

/** Each line written whole to fd 2 before the call returns (kernel/stdio.ts: no Node stream to build or to lose at exit). */
export const stderrSink: LogSink = { write: (line) => writeFd(2, line) };

/** The level from FERMIX_LOG_LEVEL, defaulting to info. */
export function levelFromEnv(env: Record<string, string | undefined>): LogLevel {
  const wanted = env.FERMIX_LOG_LEVEL?.toLowerCase();
  return wanted && wanted in LEVEL_RANK ? (wanted as LogLevel) : "info";
}

export function createLogger(env: Record<string, string | undefined>, sink: LogSink = stderrSink): Logger {
  return new Logger(sink, levelFromEnv(env), new Redactor());
}

/**
 * The wizard's prompts: @clack/prompts bound to the terminal setup was given,
 * with a cancelled prompt (Ctrl-C, Esc) turned into one exception that the
 * wizard catches once, and validation through the config loader.
 */

import type { Readable, Writable } from "node:stream";
import * as clack from "@clack/prompts";
import { valueProblem } from "../setup/validate.ts";

export class WizardCancelled extends Error {
  override name = "WizardCancelled";
}

export interface Io {
  input: Readable;
  output: Writable;
}

type Option<T> = { value: T; label: string; hint?: string };

function answered<T>(value: unknown): T {
  if (clack.isCancel(value)) throw new WizardCancelled("cancelled");
  return value as T;
}

/** Break a message at spaces to fit the terminal beside clack's three-column guide (it does not wrap log lines itself). */
export function wrapText(text: string, width: number): string {
  return text
    .split("\n")
    .map((line) => {
      const out: string[] = [];
      let current = "";
      for (const word of line.split(" ")) {
        if (current !== "" && current.length + 1 + word.length > width) {
          out.push(current);
          current = word;
        } else current = current === "" ? word : `${current} ${word}`;
      }
      out.push(current);
      return out.join("\n");
    })
    .join("\n");
}

/** The prompts, bound to one terminal. */
export function prompts(io: Io) {
  const fit = (text: string) => wrapText(text, Math.max(40, ((io.output as { columns?: number }).columns ?? 80) - 4));
  return {
    io,
    async text(message: string, options: { initial?: string; placeholder?: string; validate?: (v: string) => string | undefined } = {}): Promise<string> {
      return answered<string>(
        await clack.text({
          ...io,
          message,
          ...(options.initial !== undefined ? { initialValue: options.initial } : {}),
          ...(options.placeholder !== undefined ? { placeholder: options.placeholder } : {}),
          ...(options.validate ? { validate: (v) => options.validate!(v ?? "") } : {}),
        }),
      ).trim();
    },
    async secret(message: string, options: { validate?: (v: string) => string | undefined } = {}): Promise<string> {
      return answered<string>(await clack.password({ ...io, message, ...(options.validate ? { validate: (v) => options.validate!(v ?? "") } : {}) })).trim();
    },
    async confirm(message: string, initial = true): Promise<boolean> {
      return answered<boolean>(await clack.confirm({ ...io, message, initialValue: initial }));
    },
    async select<T>(message: string, options: Option<T>[], initial?: T): Promise<T> {
      return answered<T>(await clack.select<T>({ ...io, message, options: options as never, ...(initial !== undefined ? { initialValue: initial } : {}) }));
    },
    async multiselect<T>(message: string, options: Option<T>[], initial: T[]): Promise<T[]> {
      return answered<T[]>(await clack.multiselect<T>({ ...io, message, options: options as never, initialValues: initial, required: false }));
    },
    spinner() {
      return clack.spinner({ ...io, indicator: "dots" });
    },
    note(message: string, title?: string) {
      clack.note(message, title, io);
    },
    log: {
      step: (message: string) => clack.log.step(fit(message), io),
      info: (message: string) => clack.log.info(fit(message), io),
      success: (message: string) => clack.log.success(fit(message), io),
      warn: (message: string) => clack.log.warn(fit(message), io),
      error: (message: string) => clack.log.error(fit(message), io),
    },
    intro: (title: string) => clack.intro(title, io),
    outro: (message: string) => clack.outro(message, io),
    cancel: (message: string) => clack.cancel(message, io),
  };
}

export type Prompts = ReturnType<typeof prompts>;

/** A validator for a prompt: the loader's message for a bad value at `path`; empty passes when `optional`. */
export function loaderCheck(path: string, convert: (raw: string) => unknown = (raw) => raw.trim(), optional = false) {
  return (raw: string): string | undefined => {
    if (raw.trim() === "") return optional ? undefined : "a value is needed here";
    return valueProblem(path, convert(raw));
  };
}

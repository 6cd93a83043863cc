/** describeError: the one way an error becomes text (src/kernel/errors.ts). */
import { expect, test } from "bun:test";
import { describeError } from "../../src/kernel/errors.ts";

test("an Error's message, or whatever else was thrown as text", () => {
  expect(describeError(new TypeError("bad input"))).toBe("bad input");
  expect(describeError("a string")).toBe("a string");
  expect(describeError(42)).toBe("42");
  expect(describeError(undefined)).toBe("undefined");
});

/**
 * A tool's arguments, checked against the one TypeBox schema that is also
 * the JSON Schema the model is offered (`defineTool` in ./types.ts). What
 * the model sent either is what the schema says, typed, or it is refused
 * with one ToolError naming each wrong field and what it may be — the
 * model reads it as `error: …` and can correct itself.
 *
 * One leniency, kept here and nowhere else: a `null` for an optional
 * argument means it was left out (models often fill every field they were
 * shown, and `null` is how they say "none").
 */
import { Kind, type SchemaOptions, type TObject, type TSchema, type TUnsafe, Type, TypeRegistry } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { ToolError } from "./errors.ts";

TypeRegistry.Set("StringEnum", (schema: { enum: string[] }, value) => typeof value === "string" && schema.enum.includes(value));

/**
 * A string from a fixed set, as JSON Schema's `{"type": "string", "enum": […]}`
 * (the form models handle best); TypeBox's own unions of literals would
 * reach the model as `anyOf`.
 */
export function StringEnum<const T extends readonly string[]>(values: T, options: SchemaOptions = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ ...options, [Kind]: "StringEnum", type: "string", enum: [...values] });
}

/** `args` as the schema types them, or a ToolError saying which fields are wrong and what each may be. */
export function checkArguments<T extends TObject>(tool: string, schema: T, args: unknown): T["static"] {
  if (typeof args !== "object" || args === null || Array.isArray(args)) throw new ToolError("the arguments must be a JSON object");
  const given = withoutNullOptionals(schema, args as Record<string, unknown>);
  if (Value.Check(schema, given)) return given;
  const problems = new Map<string, string>();
  for (const error of Value.Errors(schema, given)) {
    const field = error.path.split("/")[1] ?? "";
    if (problems.has(field)) continue;
    problems.set(field, problem(tool, schema, field, given[field]));
  }
  throw new ToolError([...problems.values()].join("; "));
}

function withoutNullOptionals(schema: TObject, args: Record<string, unknown>): Record<string, unknown> {
  const required = new Set(schema.required ?? []);
  return Object.fromEntries(Object.entries(args).filter(([key, value]) => value !== null || required.has(key) || !(key in schema.properties)));
}

/** What is wrong with one field, in a sentence the model can act on. */
function problem(tool: string, schema: TObject, field: string, value: unknown): string {
  const names = Object.keys(schema.properties);
  if (field === "") return `the arguments must be ${names.length === 0 ? "an empty object" : `an object with ${names.join(", ")}`}`;
  const property = schema.properties[field];
  if (!property) {
    return names.length === 0 ? `${tool} takes no arguments (${field} is not one)` : `${field} is not an argument of ${tool}; it takes ${names.join(", ")}`;
  }
  const allowed = allowedFor(property);
  if (value === undefined) return `${field} is required: ${allowed}`;
  if (Array.isArray(property.enum) && typeof value === "string") return `${field}: ${shown(value)} is not allowed here; use one of: ${property.enum.join(" ")}`;
  return `${field} must be ${allowed}, not ${shown(value)}`;
}

/** What a schema accepts, in words: "a string", "a whole number from 1 to 120", "a list of strings", "true or false"… */
export function allowedFor(schema: TSchema): string {
  if (Array.isArray(schema.enum)) return `one of ${schema.enum.map((v: unknown) => JSON.stringify(v)).join(", ")}`;
  if (Array.isArray(schema.anyOf)) return schema.anyOf.map((s: TSchema) => allowedFor(s)).join(" or ");
  switch (schema.type) {
    case "string":
      return "a string";
    case "boolean":
      return "true or false";
    case "integer":
    case "number": {
      const noun = schema.type === "integer" ? "a whole number" : "a number";
      const { minimum: low, maximum: high } = schema;
      if (low !== undefined && high !== undefined) return `${noun} from ${low} to ${high}`;
      if (low !== undefined) return `${noun} of at least ${low}`;
      if (high !== undefined) return `${noun} of at most ${high}`;
      return noun;
    }
    case "array": {
      const items = schema.items ? allowedFor(schema.items as TSchema).replace(/^an? /, "") : "values";
      return `a ${schema.minItems ? "non-empty " : ""}list of ${items}s`;
    }
    case "object":
      return "an object";
    default:
      return "a valid value";
  }
}

/** A value the model sent, short enough to quote back. */
function shown(value: unknown): string {
  if (typeof value === "string") return value.length <= 40 ? JSON.stringify(value) : `a string of ${value.length} characters`;
  if (typeof value === "number" || typeof value === "boolean" || value === null) return String(value);
  return Array.isArray(value) ? "a list" : "an object";
}

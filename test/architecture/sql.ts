/**
 * The rule "SQL only in src/store/", as a check of source text: outside
 * store/, no file opens a database (a value import of `bun:sqlite`; the
 * `Database` type may be handed around), runs a statement on one
 * (`.query(` or `.prepare(`), or holds SQL in a string literal (a literal
 * that opens with a statement's keyword in capitals). `.run(`/`.exec(`
 * are left out on purpose: here they are a command runner's and a regular
 * expression's, and a statement run that way was prepared by one of the above.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

export interface SqlFinding {
  line: number;
  what: string;
}

const STATEMENT =
  /(["'`])\s*(SELECT\s|INSERT\s+(?:OR\s+\w+\s+)?INTO\s|UPDATE\s+\w+\s+SET\s|DELETE\s+FROM\s|CREATE\s+(?:UNIQUE\s+|VIRTUAL\s+)?(?:TABLE|INDEX|TRIGGER|VIEW)\s|DROP\s+(?:TABLE|INDEX|TRIGGER|VIEW)\s|ALTER\s+TABLE\s|PRAGMA\s|REPLACE\s+INTO\s|WITH\s+\w+\s+AS\s*\()/;
const CALL = /\.(query|prepare)\s*\(/;
const SQLITE_VALUE_IMPORT = /^\s*import\s+(?!type\s)[^;]*from\s+["']bun:sqlite["']/;

/** Where a source text uses SQL, line by line (comments are not read). */
export function sqlFindings(source: string): SqlFinding[] {
  const findings: SqlFinding[] = [];
  const lines = source.replace(/\/\*[\s\S]*?\*\//g, (comment) => comment.replace(/[^\n]/g, " ")).split("\n");
  lines.forEach((raw, i) => {
    const line = raw.replace(/(^|[^:"'`\\])\/\/.*$/, "$1");
    const statement = STATEMENT.exec(line);
    if (statement) findings.push({ line: i + 1, what: `SQL in a string (${statement[2]!.trim()} …)` });
    const call = CALL.exec(line);
    if (call) findings.push({ line: i + 1, what: `a statement run on a database (.${call[1]}())` });
    if (SQLITE_VALUE_IMPORT.test(line)) findings.push({ line: i + 1, what: "opens a database (imports bun:sqlite for its values, not only its types)" });
  });
  return findings;
}

/** Every finding in the .ts files of `srcDir` outside its store/ folder, as "file:line: what". */
export function sqlOutsideStore(srcDir: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      const rel = relative(srcDir, path);
      if (entry.isDirectory()) {
        if (rel !== "store") walk(path);
      } else if (entry.name.endsWith(".ts")) {
        for (const finding of sqlFindings(readFileSync(path, "utf8"))) out.push(`${rel}:${finding.line}: ${finding.what}`);
      }
    }
  };
  walk(srcDir);
  return out;
}

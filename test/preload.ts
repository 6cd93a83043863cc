/**
 * Test isolation, loaded before every test file (bunfig.toml): a throwaway
 * HOME and FERMIX_HOME, the file secret store (never the developer's real
 * keychain), and no platform or provider credentials (nor an OpenClaw home
 * to import from) from the shell.
 */
import { afterAll } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const scratch = mkdtempSync(join(tmpdir(), "fermix-test-"));
// A hook registered in the preload runs once, after every test file has finished.
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
process.env.HOME = scratch;
process.env.FERMIX_HOME = join(scratch, ".fermix");
process.env.FERMIX_SECRET_STORE = "file";
process.env.NO_COLOR = "1";

const CREDENTIAL = /^(TELEGRAM|WHATSAPP|SLACK|DISCORD|SIGNAL|OPENCLAW)_|^(OPENAI|XAI|DEEPGRAM)_API_KEY$|^PORT$|^FERMIX_HTTP_BIND$|^FERMIX_LOG_LEVEL$/;
for (const name of Object.keys(process.env)) {
  if (CREDENTIAL.test(name)) delete process.env[name];
}

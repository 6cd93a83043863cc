/**
 * The setup page's HTML: the steps of `fermix setup` (provider, channels
 * with their owners, voice notes, realtime voice) as one form, and the page shown
 * once it is saved. Pure functions of the form state; secret inputs are
 * always rendered empty (a stored one is only said to be there). Step 1
 * offers the model servers found on this machine; a channel whose profile
 * offers owner pairing (Telegram) can pair its owner by a message to the bot
 * (the page waits for it, see pair.ts). Each channel's keys, labels and
 * titles are its own (src/channels/<name>/setup.ts, profile.ts).
 */
import { profileOf } from "../../channels/registry.ts";
import type { Config } from "../../config/schema.ts";
import type { ReloadResult } from "../../kernel/health.ts";
import { ANTHROPIC_BASE_URL, OPENAI_BASE_URL } from "../../setup/changes.ts";
import { isSecretPath, PROVIDER_FIELDS, SETUP_CHANNELS, type SetupChannel, type SetupField, TRANSCRIPTION_FIELDS, WEB_FIELDS } from "../../setup/fields.ts";
import type { LocalServer } from "../../setup/probe.ts";
import { describeChannel, describeComputer, describeProvider, describeRealtime, describeTranscription, describeWebSearch } from "../../setup/summary.ts";
import { channelTitle, explainFailure } from "../dashboard/remedies.ts";
import { type Html, html } from "../html.ts";
import {
  COMPUTER_DISPLAY,
  COMPUTER_ENABLED,
  channelFields,
  FALLBACK_FIELD,
  type FormState,
  LOCAL_CHOICE,
  localChoiceValue,
  REALTIME_ENABLED,
  realtimeTextFields,
  SEARCH_BACKEND_CHOICES,
  TRANSCRIPTION_BACKEND_CHOICES,
} from "./form.ts";

const providerHelp = (key: string) => PROVIDER_FIELDS.find((f) => f.path.endsWith(`.${key}`))?.help ?? "";

/** Labels of the provider's and transcription's keys; a channel's come with its fields. */
const LABELS: Record<string, string> = {
  base_url: "Base URL",
  api: "API",
  model: "Model",
  api_key: "API key",
  vision: "The model understands images",
  context_window: "Context window (tokens)",
  backend: "Backend",
  search_backend: "Search backend",
  brave_api_key: "Brave Search API key",
  searxng_url: "SearXNG URL",
};

/** Labels of realtime voice's keys (its `model` is not the provider's). */
const REALTIME_LABELS: Record<string, string> = { provider: "Provider", model: "Realtime model", voice: "Voice" };
const REALTIME_PLACEHOLDERS: Record<string, string> = { provider: "the primary provider", model: "gpt-realtime", voice: "marin" };

const labelFor = (path: string) => LABELS[path.split(".").at(-1)!] ?? path.split(".").at(-1)!;

/** A channel's own declaration of the key at `path` (its label, whether it is advanced). */
const declared = (name: SetupChannel, path: string) => profileOf(name).setup?.fields.find((f) => f.key === path.split(".").at(-1));
const idFor = (name: string) => `f-${name.replaceAll(".", "-")}`;

function errorFor(form: FormState, name: string): Html | string {
  const error = form.errors[name];
  const note = form.notes[name];
  return html`${error ? html`<div class="field-error" role="alert">${error}</div>` : ""}${note ? html`<div class="field-note ${note.tone}" role="status" data-note="${name}">${note.text}</div>` : ""}`;
}

function input(form: FormState, name: string, label: string, help: string, secret: boolean, placeholder = ""): Html {
  const id = idFor(name);
  if (secret) {
    const hint = form.secretsSet.has(name) ? "stored — leave empty to keep it" : "not set";
    return html`<label for="${id}">${label}<span class="help">${help}</span></label>
<input type="password" id="${id}" name="${name}" value="" autocomplete="off" placeholder="${hint}" spellcheck="false">${errorFor(form, name)}`;
  }
  return html`<label for="${id}">${label}<span class="help">${help}</span></label>
<input type="text" id="${id}" name="${name}" value="${form.values[name] ?? ""}" placeholder="${placeholder}" autocomplete="off" spellcheck="false">${errorFor(form, name)}`;
}

function checkbox(form: FormState, name: string, label: string): Html {
  const id = idFor(name);
  return html`<label class="check" for="${id}"><input type="checkbox" id="${id}" name="${name}" value="on"${form.checked[name] ? html` checked` : ""}>${label}</label>${errorFor(form, name)}`;
}

function select(form: FormState, name: string, label: string, help: string, options: ReadonlyArray<readonly [string, string]>): Html {
  const id = idFor(name);
  const current = form.values[name] ?? "";
  return html`<label for="${id}">${label}<span class="help">${help}</span></label>
<select id="${id}" name="${name}">${options.map(([value, text]) => html`<option value="${value}"${value === current ? html` selected` : ""}>${text}</option>`)}</select>${errorFor(form, name)}`;
}

const fieldInput = (form: FormState, field: SetupField, label = labelFor(field.path)) => input(form, field.path, label, field.help, isSecretPath(field.path));

/** The form name of a channel's owner id, which pairing fills in. */
export const ownerField = (name: SetupChannel) => `fermix_channels.${name}.owner_user_id`;

/** Owner pairing: one button that sends the form and waits for a message to the bot. */
function pairAction(name: SetupChannel, pairing: PairingOffer): Html {
  const bot = pairing.bots[name] ? `@${pairing.bots[name]}` : "your bot";
  return html`<button type="submit" class="secondary" name="pair" value="${name}" formnovalidate>Pair: send any message to ${bot} now</button>
<span class="help">Waits up to ${pairing.seconds} s for a private message to the bot and fills in its sender as the owner (nothing is saved until you save). You can still type the id by hand.</span>`;
}

function channelStep(form: FormState, config: Config, name: SetupChannel, pairing: PairingOffer): Html {
  const fields = channelFields(name);
  const advanced = (f: SetupField) => declared(name, f.path)?.advanced === true;
  const main = fields.filter((f) => !advanced(f));
  const more = fields.filter(advanced);
  const labelled = (f: SetupField) => fieldInput(form, f, declared(name, f.path)?.label ?? labelFor(f.path));
  const pairs = profileOf(name).setup?.pairing !== undefined;
  const { title } = profileOf(name);
  const on = form.checked[`fermix_channels.${name}.enabled`];
  const hasError = fields.some((f) => form.errors[f.path] || form.notes[f.path]);
  return html`<details class="channel" data-channel="${name}"${on || hasError ? html` open` : ""}>
<summary><span>${title}</span><span class="muted">${describeChannel(config, name)}</span></summary>
${checkbox(form, `fermix_channels.${name}.enabled`, `Serve ${title}`)}
${main.map((f) => html`${labelled(f)}${pairs && f.path === ownerField(name) ? pairAction(name, pairing) : ""}`)}
${more.length > 0 ? html`<details class="more"><summary>More settings</summary>${more.map(labelled)}</details>` : ""}
</details>`;
}

/** What the page says about owner pairing before it starts. */
export interface PairingOffer {
  /** Each pairing channel's bot username, when its token was checked in this session. */
  bots: Partial<Record<SetupChannel, string>>;
  /** How long pairing waits, in seconds. */
  seconds: number;
}

export interface WizardPage {
  form: FormState;
  config: Config;
  csrf: string;
  configPath: string;
  /** Model servers found on this machine as the page was made. */
  servers: readonly LocalServer[];
  pairing: PairingOffer;
}

/** The fallback order, with the providers it may name; it is asked only when there is another provider to name. */
function fallbackInput(form: FormState, config: Config): Html | string {
  const names = Object.keys(config.fermix_core.providers);
  if (names.length < 2 && (form.values[FALLBACK_FIELD.path] ?? "") === "") return "";
  return input(
    form,
    FALLBACK_FIELD.path,
    "Fallback providers, in order",
    `${FALLBACK_FIELD.help}; configured: ${names.join(", ")}. Empty: none.`,
    false,
    "none",
  );
}

/** The servers found on this machine, and the choice of one of their models. */
function foundServers(form: FormState, servers: readonly LocalServer[]): Html {
  if (servers.length === 0) {
    return html`<p class="muted" data-found-servers="0">No model server answered on this machine (Ollama, llama.cpp, LM Studio or vLLM on its usual port); reload the page to look again.</p>`;
  }
  const current = form.values[LOCAL_CHOICE] ?? "";
  const count = (n: number) => `${n} model${n === 1 ? "" : "s"}`;
  return html`<div class="found" data-found-servers="${servers.length}">
<label for="${idFor(LOCAL_CHOICE)}">Found on this machine<span class="help">A local server needs no API key. Choosing one of its models fills in the fields below; choose "Another provider" to use the fields as you type them.</span></label>
<ul>${servers.map((s) => html`<li data-server="${s.baseUrl}"><strong>${s.label}</strong> at <code>${s.baseUrl}</code>: ${s.models.length > 0 ? `${count(s.models.length)} (${s.models.slice(0, 5).join(", ")}${s.models.length > 5 ? ", …" : ""})` : "no models listed"}</li>`)}</ul>
<select id="${idFor(LOCAL_CHOICE)}" name="${LOCAL_CHOICE}">
<option value=""${current === "" ? html` selected` : ""}>Another provider, entered below</option>
${servers
  .filter((s) => s.models.length > 0)
  .map(
    (s) =>
      html`<optgroup label="${s.label} at ${s.baseUrl}">${s.models.map((m) => {
        const value = localChoiceValue(s, m);
        return html`<option value="${value}"${value === current ? html` selected` : ""}>${m}</option>`;
      })}</optgroup>`,
  )}
</select>${errorFor(form, LOCAL_CHOICE)}
</div>`;
}

/**
 * The page's one script, a convenience: choosing Anthropic's API swaps
 * OpenAI's default URL for Anthropic's (and back); choosing a found server
 * fills in base URL, API and model; typing in those fields goes back to
 * "another provider". The server does the same itself, so the page works
 * without.
 */
export const WIZARD_SCRIPT = `(()=>{const field=(n)=>document.getElementById("f-provider-"+n);
const urls={anthropic:${JSON.stringify(ANTHROPIC_BASE_URL)},openai:${JSON.stringify(OPENAI_BASE_URL)}};
field("api")?.addEventListener("change",()=>{const u=field("base_url");if(!u)return;const a=field("api").value==="anthropic";
if(a&&(u.value===""||u.value===urls.openai))u.value=urls.anthropic;if(!a&&u.value===urls.anthropic)u.value=urls.openai;});
const pick=document.getElementById("f-provider-local");if(!pick)return;
pick.addEventListener("change",()=>{const v=pick.value,i=v.indexOf(" ");if(i<0)return;
field("base_url").value=v.slice(0,i);field("model").value=v.slice(i+1);field("api").value="chat";});
for(const n of ["base_url","model"])field(n).addEventListener("input",()=>{pick.value="";});})();`;

/** Shown at once while pairing waits for the message (hidden by the stylesheet once the page follows). */
export function renderPairWaiting(name: SetupChannel, bot: string, seconds: number): Html {
  return html`<div class="narrow pair-wait"><header class="top"><h1 class="brand"><span class="mark"></span>Fermix setup</h1></header>
<main><div class="banner warn" role="status" data-pairing="waiting">Waiting for a message to <strong>@${bot}</strong>: send it any message from your own ${profileOf(name).displayName} account now. This page waits up to ${seconds} s, then shows the form again.</div></main></div>`;
}

/** The channels whose token a live check asks about (those that pair their owner), as the check box names them. */
const checkedTokens = () =>
  SETUP_CHANNELS.filter((name) => profileOf(name).setup?.pairing)
    .map((name) => `the ${profileOf(name).displayName} token`)
    .join(" and ");

/** The form: six steps and a save button. */
export function renderWizard({ form, config, csrf, configPath, servers, pairing }: WizardPage): Html {
  const transcriptionBackend = TRANSCRIPTION_FIELDS.find((f) => f.path.endsWith(".backend"))!;
  const others = TRANSCRIPTION_FIELDS.filter((f) => f !== transcriptionBackend);
  const searchBackend = WEB_FIELDS.find((f) => f.path.endsWith(".search_backend"))!;
  const anyError = form.general.length > 0 || Object.keys(form.errors).length > 0;
  return html`<div class="narrow"><header class="top"><h1 class="brand"><span class="mark"></span>Fermix setup</h1></header>
<main>
<p class="lead">The same steps as <code>fermix setup</code>. Saving writes <code>${configPath}</code> (credentials go to the secret store, never into the file) and applies it to the running daemon at once.</p>
${anyError ? html`<div class="banner bad" role="alert"><strong>Nothing was saved.</strong>${form.general.map((g) => html`<div>${g}</div>`)}${Object.keys(form.errors).length > 0 ? html`<div>Fix the fields marked below.</div>` : ""}</div>` : ""}
<form method="post" action="/setup" autocomplete="off" novalidate>
<input type="hidden" name="csrf" value="${csrf}">
<button type="submit" class="implicit" tabindex="-1" aria-hidden="true">Save and apply</button>
<section class="step" aria-labelledby="step-provider"><h2 id="step-provider"><span class="n">1</span>Model provider</h2>
<p class="muted">Now: ${describeProvider(config)}</p>
${foundServers(form, servers)}
${input(form, "provider.base_url", labelFor("base_url"), providerHelp("base_url"), false, "https://api.openai.com/v1")}
${select(form, "provider.api", labelFor("api"), providerHelp("api"), [
  ["responses", "Responses (OpenAI)"],
  ["anthropic", "Anthropic Messages (Claude)"],
  ["chat", "Chat completions (Ollama, llama.cpp, vLLM, OpenRouter…)"],
])}
${input(form, "provider.model", labelFor("model"), providerHelp("model"), false, "gpt-5.1")}
${input(form, "provider.api_key", labelFor("api_key"), providerHelp("api_key"), true)}
${checkbox(form, "provider.vision", labelFor("vision"))}
${input(form, "provider.context_window", labelFor("context_window"), providerHelp("context_window"), false, "128000")}
${fallbackInput(form, config)}
</section>
<section class="step" aria-labelledby="step-channels"><h2 id="step-channels"><span class="n">2</span>Channels</h2>
<p class="muted">Turn on the places you chat from. Each needs its credentials and your own user id there (the owner): nobody else is answered unless you allow them.</p>
${SETUP_CHANNELS.map((name) => channelStep(form, config, name, pairing))}
</section>
<section class="step" aria-labelledby="step-voice"><h2 id="step-voice"><span class="n">3</span>Voice notes</h2>
<p class="muted">Now: ${describeTranscription(config)}</p>
${select(form, transcriptionBackend.path, labelFor(transcriptionBackend.path), transcriptionBackend.help, [
  ["", "Default (OpenAI, with the openai provider's key)"],
  ...TRANSCRIPTION_BACKEND_CHOICES.map((b) => [b, b === "openai" ? "OpenAI" : b === "xai" ? "xAI" : "Deepgram"] as const),
])}
${others.map((f) => fieldInput(form, f))}
</section>
<section class="step" aria-labelledby="step-web"><h2 id="step-web"><span class="n">4</span>Web search</h2>
<p class="muted">Now: ${describeWebSearch(config)}. Reading a link (web_fetch) needs nothing; searching the web needs a backend.</p>
${select(form, searchBackend.path, labelFor(searchBackend.path), searchBackend.help, SEARCH_BACKEND_CHOICES)}
${WEB_FIELDS.filter((f) => f !== searchBackend).map((f) => fieldInput(form, f))}
</section>
<section class="step" aria-labelledby="step-computer"><h2 id="step-computer"><span class="n">5</span>Computer use</h2>
<p class="muted">Now: ${describeComputer(config)}. The assistant sees a desktop and clicks and types on it — yours alone, in your direct chats; <code>/pause</code> takes it back. A virtual display needs Xvfb, xdotool and ImageMagick; <code>fermix doctor</code> checks.</p>
${checkbox(form, COMPUTER_ENABLED, "Let the assistant drive a desktop")}
${select(
  form,
  COMPUTER_DISPLAY,
  "Display",
  "virtual: a private display started for each session (works on a server); host: this machine's own X11 display, with everything on it",
  [
    ["virtual", "A private virtual display (Xvfb)"],
    ["host", "This machine's own display (X11)"],
  ],
)}
</section>
<section class="step" aria-labelledby="step-realtime"><h2 id="step-realtime"><span class="n">6</span>Realtime voice</h2>
<p class="muted">Now: ${describeRealtime(config)}. Talk with the assistant live from <code>fermix talk</code> or the <a href="/talk">Talk page</a>, through the provider's realtime API.</p>
${checkbox(form, REALTIME_ENABLED, "Talk with Fermix live, by voice")}
${realtimeTextFields().map((f) => {
  const key = f.path.split(".").at(-1)!;
  return input(form, f.path, REALTIME_LABELS[key] ?? labelFor(f.path), f.help, false, REALTIME_PLACEHOLDERS[key] ?? "");
})}
</section>
${checkbox(form, "check", `Check the provider${checkedTokens() ? ` and ${checkedTokens()}` : ""} before saving`)}
<div class="actions"><button type="submit" name="save" value="1">Save and apply</button><a href="/">Status page</a></div>
</form>
</main></div>`;
}

export interface DonePage {
  configPath: string;
  backupPath?: string;
  secretStore: string;
  secretsStored: number;
  wrote: boolean;
  reload: ReloadResult;
}

/** After saving: what was written, what the daemon did with it, and its health now. */
export function renderDone(done: DonePage): Html {
  const { reload } = done;
  const health = reload.health;
  const moved = [
    ...reload.channels.started.map((c) => `${channelTitle(c)} started`),
    ...reload.channels.restarted.map((c) => `${channelTitle(c)} restarted`),
    ...reload.channels.stopped.map((c) => `${channelTitle(c)} stopped`),
  ];
  const tone = !reload.ok ? "bad" : health.status === "ready" ? "ok" : "warn";
  const headline = !reload.ok
    ? html`The daemon kept its previous configuration: ${reload.error ?? "the new one did not load"}.`
    : health.status === "ready"
      ? html`Saved and applied. Fermix is <strong>ready</strong>: send yourself a message.`
      : html`Saved and applied. Fermix is <strong>${health.status.replace("_", " ")}</strong>: see below.`;
  return html`<div class="narrow"><header class="top"><h1 class="brand"><span class="mark"></span>Fermix setup</h1></header>
<main>
<div class="banner ${tone}" role="status" data-health="${health.status}">${headline}</div>
<section class="step"><h2>What was written</h2>
<ul>
<li>${done.wrote ? html`Wrote <code>${done.configPath}</code>${done.backupPath ? html` (the previous file is <code>${done.backupPath}</code>)` : ""}.` : html`Nothing changed in <code>${done.configPath}</code>.`}</li>
${done.secretsStored > 0 ? html`<li>Stored ${done.secretsStored} credential${done.secretsStored === 1 ? "" : "s"} in ${done.secretStore}.</li>` : ""}
${moved.length > 0 ? html`<li>Channels: ${moved.join(", ")}.</li>` : ""}
${reload.provider_changed ? html`<li>The agent now uses the new provider.</li>` : ""}
</ul>
${reload.restart_required.length > 0 ? html`<div class="banner warn" data-restart-required="true">Restart required to apply: ${reload.restart_required.join("; ")}. Restart <code>fermix run</code>, or run <code>fermix service install</code> to restart the service.</div>` : ""}
</section>
${health.failures.length > 0 ? html`<section class="why ${health.status}"><h2>What still needs attention</h2><ul>${health.failures.map((f) => html`<li>${explainFailure(f).words}</li>`)}</ul></section>` : ""}
<p class="lead">This setup session has ended. To change something later, run <code>fermix setup --web</code> for a new link.</p>
<div class="actions"><a href="/">Open the status page</a></div>
</main></div>`;
}

/**
 * The dashboard as HTML, a pure function of a DashboardView: the page's
 * live part is rendered here both for the first load and for every update
 * pushed over /events, so the browser only swaps it in.
 */
import type { ActivityEntry, ChannelTally } from "../../kernel/activity.ts";
import type { ChannelHealth } from "../../kernel/health.ts";
import { type Html, html } from "../html.ts";
import { hourChart } from "./chart.ts";
import { channelTitle, explainFailure } from "./remedies.ts";
import type { DashboardView } from "./types.ts";

const STATUS_WORDS: Record<string, string> = {
  ready: "Ready",
  degraded: "Degraded",
  setup_required: "Setup required",
  starting: "Starting",
  failed: "Failed",
  unconfigured: "Not configured",
  disabled: "Off",
};

const pill = (status: string, extra = "") => html`<span class="pill s-${status}${extra}">${STATUS_WORDS[status] ?? status}</span>`;

/** 24-hour local clock time. */
export function clock(at: number): string {
  const d = new Date(at);
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, "0")).join(":");
}

/**
 * A span of time in words, to the minute: "<1 min", "12 min",
 * "3 h 5 min", "2 d 4 h" — coarse on purpose, so the live page changes
 * (and is pushed again) only when something a person reads has changed.
 */
export function span(ms: number): string {
  const m = Math.floor(Math.max(0, ms) / 60_000);
  if (m < 1) return "<1 min";
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h} h ${m % 60} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}

const ago = (at: number | null | undefined, now: number) => {
  if (!at) return html`<span class="muted">never</span>`;
  if (now - at < 60_000) return html`<time>${clock(at)}</time> <span class="muted">(now)</span>`;
  return html`<time>${clock(at)}</time> <span class="muted">(${span(now - at)} ago)</span>`;
};

const megabytes = (bytes: number) => `${Math.round(bytes / (1024 * 1024))} MB`;
const seconds = (ms: number) => (ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`);

const MODE_WORDS: Record<string, string> = {
  polling: "long polling",
  webhook: "webhooks",
  gateway: "gateway socket",
  subprocess: "signal-cli",
  socket: "local socket",
};

function channelCard(channel: ChannelHealth, view: DashboardView): Html {
  const tally: ChannelTally | undefined = view.activity.channels[channel.name];
  const totals = view.totals.channels[channel.name];
  const failure = view.health.failures.find((f) => f.startsWith(`channel ${channel.name}: `));
  const connected =
    (channel.status === "ready" || channel.status === "degraded") && tally?.readySince
      ? html`${clock(tally.readySince)} <span class="muted">(${span(view.now - tally.readySince)})</span>`
      : html`<span class="muted">not connected</span>`;
  return html`<article class="card channel" data-channel="${channel.name}" data-status="${channel.status}">
<h3>${channelTitle(channel.name)} ${pill(channel.status)}</h3>
<dl>
<dt>Mode</dt><dd>${channel.mode ? (MODE_WORDS[channel.mode] ?? channel.mode) : "—"}</dd>
<dt>Connected</dt><dd>${connected}</dd>
<dt>Last inbound</dt><dd>${ago(tally?.lastInboundAt, view.now)}</dd>
<dt>Last outbound</dt><dd>${ago(tally?.lastOutboundAt, view.now)}</dd>
<dt>Messages today</dt><dd>${tally?.todayInbound ?? 0} in · ${tally?.todayOutbound ?? 0} out</dd>
<dt>Since start</dt><dd>${totals?.inbound ?? 0} in · ${totals?.outbound ?? 0} out</dd>
</dl>
${failure ? html`<p class="err">${explainFailure(failure).words}</p>` : ""}
${tally?.lastError && !failure ? html`<p class="err muted">Last error at ${clock(tally.lastError.at)}: ${tally.lastError.detail}</p>` : ""}
</article>`;
}

function providerCard(view: DashboardView): Html {
  const primary = view.health.providers.find((p) => p.primary) ?? view.health.providers[0];
  // The providers that answer when the primary cannot, in the order they are tried, each with its own status.
  const fallbacks = (view.fallback ?? []).flatMap((name) => view.health.providers.filter((p) => p.name === name));
  const last = view.activity.lastTurn;
  if (!view.provider) {
    return html`<article class="card provider"><h3>Model provider ${pill("unconfigured")}</h3>
<p class="muted">None yet. Run <code>fermix setup --web</code> for a link to the setup page.</p></article>`;
  }
  return html`<article class="card provider" data-status="${primary?.status ?? "ready"}">
<h3>Model provider ${pill(primary?.status ?? "ready")}</h3>
<dl>
<dt>Provider</dt><dd>${view.provider.name}</dd>
<dt>Model</dt><dd>${view.provider.model}</dd>
<dt>API</dt><dd>${view.provider.api}</dd>
${fallbacks.length > 0 ? html`<dt>Fallback</dt><dd>${fallbacks.map((p, i) => html`${i > 0 ? ", " : ""}${p.name} ${pill(p.status)}`)}</dd>` : ""}
<dt>Last turn</dt><dd>${last ? html`${seconds(last.durationMs)} at <time>${clock(last.at)}</time>${last.provider ? html` · answered by <b class="answered-by">${last.provider}</b>` : ""}` : html`<span class="muted">none yet</span>`}</dd>
<dt>Tokens</dt><dd>${last ? `${last.inputTokens.toLocaleString("en")} in · ${last.outputTokens.toLocaleString("en")} out` : "—"}</dd>
<dt>Turns since start</dt><dd>${view.totals.turns}</dd>
</dl></article>`;
}

function queuesCard(view: DashboardView): Html {
  const { queues, jobs } = view;
  const num = (n: number, what: string) => html`<div class="num"><b>${n}</b><span>${what}</span></div>`;
  return html`<article class="card queues"><h3>Work</h3>
<div class="nums">
${num(queues.runningTurns, "turns running")}
${num(queues.waitingMessages, "messages waiting")}
${num(queues.backgroundTasks, "background tasks")}
${num(queues.outboxPending, "replies unsent")}
</div>
<dl>
<dt>Scheduler</dt><dd>${jobs.state === "running" ? "running" : "stopped"}</dd>
<dt>Jobs pending</dt><dd>${jobs.pending}${jobs.active > 0 ? ` (${jobs.active} running)` : ""}${jobs.waiting > 0 ? ` (${jobs.waiting} waiting for a slot)` : ""}</dd>
<dt>Next job</dt><dd>${jobs.nextDueAt ? html`<time>${new Date(jobs.nextDueAt).toLocaleString("en-GB")}</time>` : html`<span class="muted">none</span>`}</dd>
</dl></article>`;
}

/** The desktop card: only where computer use is on; idle until a session starts. */
function desktopCard(view: DashboardView): Html {
  const { desktop } = view;
  if (!desktop?.enabled) return html``;
  const session = desktop.session;
  const state = session ? session.state : "idle";
  return html`<article class="card desktop" data-state="${state}">
<h3>Desktop <span class="pill s-${session ? (session.state === "paused" ? "degraded" : "ready") : "disabled"}">${session ? (session.state === "paused" ? "Paused" : "Running") : "Idle"}</span></h3>
<dl>
<dt>Display</dt><dd>${session ? `${session.display} (${desktop.display})` : desktop.display}</dd>
<dt>Started</dt><dd>${session ? html`<time>${clock(session.startedAt)}</time> <span class="muted">(${span(view.now - session.startedAt)})</span>` : html`<span class="muted">no session</span>`}</dd>
<dt>Actions</dt><dd>${session ? session.actions : 0}</dd>
<dt>Last action</dt><dd>${session ? ago(session.lastUsedAt, view.now) : html`<span class="muted">—</span>`}</dd>
</dl>
${session?.state === "paused" ? html`<p class="muted">Paused by the owner: /resume hands it back, /stop closes it.</p>` : ""}
</article>`;
}

/** Realtime voice, when it is on: whether a session is live and a companion connected, and the way to the Talk page. */
function voiceCard(view: DashboardView): Html {
  const voice = view.health.realtime;
  if (!voice.enabled) return html``;
  const live = voice.active_sessions > 0;
  return html`<article class="card voice" data-status="${voice.status}" data-live="${live ? "yes" : "no"}">
<h3>Voice ${pill(voice.status)}</h3>
<dl>
<dt>Session</dt><dd>${live ? html`<b>live</b>` : html`<span class="muted">none</span>`}</dd>
<dt>Companions</dt><dd>${voice.active_clients}</dd>
<dt>Provider</dt><dd>${voice.provider ?? "—"}</dd>
<dt>Model</dt><dd>${voice.model ?? "—"}</dd>
</dl>
<p><a href="/talk">Open the Talk page</a> · or <code>fermix talk</code></p></article>`;
}

const TRANSPORT_WORDS = { stdio: "program on stdio", http: "streamable HTTP" } as const;

/** The MCP servers: each one's state, transport and the tools it offers now. */
function toolServersCard(view: DashboardView): Html {
  const servers = view.toolServers ?? [];
  if (servers.length === 0) return html``;
  const status = servers.some((s) => s.state === "restarting") ? "degraded" : servers.some((s) => s.state === "starting") ? "starting" : "ready";
  const rows = servers.map(
    (s) =>
      html`<dt>${s.name}</dt><dd data-mcp-server="${s.name}" data-state="${s.state}">${pill(s.state === "restarting" ? "degraded" : s.state)} ${s.state === "ready" ? `${s.tools} tool${s.tools === 1 ? "" : "s"}` : (s.problem ?? "")} <span class="muted">(${TRANSPORT_WORDS[s.transport]})</span></dd>`,
  );
  return html`<article class="card tool-servers" data-status="${status}"><h3>Tool servers (MCP) ${pill(status)}</h3>
<dl>${rows}</dl></article>`;
}

const EVENT_WORDS: Record<string, string> = {
  "channel.message": "message",
  "channel.reply": "reply sent",
  "turn.done": "turn answered",
  "turn.failed": "turn failed",
  "command.received": "command",
  "command.unauthorized": "command",
  "channel.webhook": "webhook",
  "transcription.message": "voice note",
  "delivery.retry": "send retried",
  "delivery.failed": "send given up",
  "channel.media_send_error": "attachment not sent",
  "dispatcher.agent_unavailable": "agent restarting",
  "provider.retry": "model request retried",
  "provider.failover": "model provider failed over",
  "tool.call": "tool",
  "sandbox.decision": "sandbox",
  "job.run": "scheduled job",
  "computer.action": "desktop",
  "realtime.session": "voice session",
};

function activityItem(entry: ActivityEntry): Html {
  const dir =
    entry.direction === "inbound"
      ? html`<span class="dir-in" title="inbound">↓ in</span>`
      : entry.direction === "outbound"
        ? html`<span class="dir-out" title="outbound">↑ out</span>`
        : "";
  const what = EVENT_WORDS[entry.event] ?? entry.event;
  return html`<li data-event="${entry.event}"><time>${clock(entry.at)}</time><span class="ch">${entry.channel ? channelTitle(entry.channel) : "—"}</span><span>${what} ${dir}${entry.detail ? html` <span class="muted">${entry.detail}</span>` : ""}</span><span class="dur">${entry.durationMs !== undefined ? seconds(entry.durationMs) : ""}</span></li>`;
}

function why(view: DashboardView): Html {
  const { health } = view;
  const restart = health["restart_required?"]
    ? html`<div class="banner warn">Some configuration changes take effect only after a restart: restart <code>fermix run</code>, or <code>fermix service install</code> restarts the service.</div>`
    : "";
  if (health.failures.length === 0) return html`${restart}`;
  const items = health.failures.map((line) => {
    const { words, fixes } = explainFailure(line);
    const fix =
      fixes.length > 0
        ? html`<div class="fix">Fix: ${fixes.map((f, i) => html`${i > 0 ? " or " : ""}${f.kind === "key" ? "set " : "run "}<code>${f.text}</code>`)}</div>`
        : "";
    return html`<li>${words}${fix}</li>`;
  });
  return html`${restart}<section class="why ${health.status}" aria-label="What needs attention"><h2>What needs attention</h2><ul>${items}</ul></section>`;
}

const SUMMARY: Record<string, string> = {
  ready: "Everything is working: every enabled channel is up and the model answers.",
  degraded: "Fermix is running, but something needs attention.",
  setup_required: "Fermix is running but has nothing to answer with yet.",
};

/** The live part of the page (everything inside <main id="live">). */
export function renderLive(view: DashboardView): Html {
  const { health } = view;
  const enabled = health.channels.filter((c) => c.enabled);
  const off = health.channels.filter((c) => !c.enabled);
  const entries = view.activity.entries;
  return html`<div class="status" data-status="${health.status}">${pill(health.status, " big")}<p>${SUMMARY[health.status] ?? ""}</p></div>
<p class="meta"><span>v${view.process.version}</span><span>up ${span(view.now - view.process.startedAt)}</span><span>memory ${megabytes(view.process.rssBytes)} (heap ${megabytes(view.process.heapBytes)})</span></p>
${why(view)}
<section aria-label="Channels and agent"><h2>Channels and agent</h2>
<div class="grid">${enabled.map((c) => channelCard(c, view))}${providerCard(view)}${queuesCard(view)}${toolServersCard(view)}${desktopCard(view)}${voiceCard(view)}</div>
<p class="off">${enabled.length === 0 ? "No channel is turned on. " : ""}${off.length > 0 ? `Off: ${off.map((c) => channelTitle(c.name)).join(", ")}.` : ""}</p>
</section>
<section aria-label="Last hour"><h2>Last hour</h2><div class="card">${hourChart(view.activity.chart)}</div></section>
<section aria-label="Recent activity"><h2>Recent activity</h2><div class="card">
${entries.length > 0 ? html`<ol class="activity">${entries.map(activityItem)}</ol>` : html`<p class="muted">Nothing yet: events show here as messages come and go.</p>`}
</div></section>`;
}

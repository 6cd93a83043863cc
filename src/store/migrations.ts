/**
 * Versioned schema migrations, applied in order, each in its own
 * transaction. Append only: a released migration is never edited.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "settings",
    sql: `CREATE TABLE settings (
      key TEXT PRIMARY KEY,
      value TEXT NOT NULL,
      updated_at INTEGER NOT NULL
    ) STRICT;`,
  },
  {
    version: 2,
    name: "idempotency, inbox, outbox",
    sql: `
    -- A platform message id seen recently: redeliveries are recognised, across restarts too.
    CREATE TABLE idempotency (
      channel TEXT NOT NULL,
      key TEXT NOT NULL,
      scope TEXT NOT NULL CHECK (scope IN ('inbound', 'outbound_media')),
      expires_at INTEGER NOT NULL,
      PRIMARY KEY (channel, key)
    ) STRICT, WITHOUT ROWID;
    CREATE INDEX idempotency_expiry ON idempotency (expires_at);

    -- Accepted inbound messages whose turn is not done yet; replayed at start.
    CREATE TABLE inbox (
      id INTEGER PRIMARY KEY,
      channel TEXT NOT NULL,
      key TEXT NOT NULL,
      message TEXT NOT NULL,
      accepted_at INTEGER NOT NULL
    ) STRICT;

    -- Every outbound message, recorded before it is sent and marked after.
    CREATE TABLE outbox (
      id INTEGER PRIMARY KEY,
      reply_key TEXT NOT NULL,
      part INTEGER NOT NULL,
      channel TEXT NOT NULL,
      chat_id TEXT NOT NULL,
      thread_id TEXT,
      kind TEXT NOT NULL CHECK (kind IN ('text', 'media')),
      payload TEXT NOT NULL,
      state TEXT NOT NULL CHECK (state IN ('pending', 'sending', 'sent', 'failed', 'unknown')),
      platform_id TEXT,
      error TEXT,
      created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL,
      UNIQUE (reply_key, part)
    ) STRICT;
    CREATE INDEX outbox_unfinished ON outbox (state) WHERE state IN ('pending', 'sending');
    `,
  },
  {
    version: 3,
    name: "conversations",
    sql: `
    -- One row per conversation (channel:chat:thread); window moves on /new.
    CREATE TABLE conversations (
      key TEXT PRIMARY KEY,
      window INTEGER NOT NULL DEFAULT 0,
      updated_at INTEGER NOT NULL
    ) STRICT;

    -- The history the model sees: the current window's messages not yet compacted.
    CREATE TABLE messages (
      id INTEGER PRIMARY KEY,
      conversation TEXT NOT NULL,
      window INTEGER NOT NULL,
      role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'summary')),
      content TEXT NOT NULL,
      compacted INTEGER NOT NULL DEFAULT 0,
      created_at INTEGER NOT NULL
    ) STRICT;
    CREATE INDEX messages_window ON messages (conversation, window, compacted, id);
    `,
  },
  {
    version: 4,
    name: "outbox threads",
    sql: `
    -- "Is the bot in this thread?" (Slack): answered from the replies it has sent there.
    CREATE INDEX outbox_threads ON outbox (channel, chat_id, thread_id) WHERE thread_id IS NOT NULL;
    `,
  },
  {
    version: 5,
    name: "outbox retries and stops",
    sql: `
    -- SQLite cannot widen a CHECK constraint: the outbox is rebuilt with the
    -- 'cancelled' state (a /stop or a replay superseded the part), a retry
    -- schedule (attempts, not_before) for parts a platform outage held back,
    -- and whether a failure may heal (transient: picked up again after a restart).
    CREATE TABLE outbox_v5 (
      id INTEGER PRIMARY KEY,
      reply_key TEXT NOT NULL,
      part INTEGER NOT NULL,
      channel TEXT NOT NULL,
      chat_id TEXT NOT NULL,
      thread_id TEXT,
      kind TEXT NOT NULL CHECK (kind IN ('text', 'media')),
      payload TEXT NOT NULL,
      state TEXT NOT NULL CHECK (state IN ('pending', 'sending', 'sent', 'failed', 'unknown', 'cancelled')),
      platform_id TEXT,
      error TEXT,
      attempts INTEGER NOT NULL DEFAULT 0,
      not_before INTEGER,
      transient INTEGER NOT NULL DEFAULT 0,
      live INTEGER NOT NULL DEFAULT 0,
      created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL,
      UNIQUE (reply_key, part)
    ) STRICT;
    INSERT INTO outbox_v5 (id, reply_key, part, channel, chat_id, thread_id, kind, payload, state, platform_id, error, created_at, updated_at)
      SELECT id, reply_key, part, channel, chat_id, thread_id, kind, payload, state, platform_id, error, created_at, updated_at FROM outbox;
    DROP TABLE outbox;
    ALTER TABLE outbox_v5 RENAME TO outbox;
    CREATE INDEX outbox_unfinished ON outbox (state) WHERE state IN ('pending', 'sending');
    CREATE INDEX outbox_finished ON outbox (updated_at) WHERE state NOT IN ('pending', 'sending');

    -- The threads Fermix has replied in (Slack: "is the bot in this thread?"), kept apart from the
    -- outbox so that sweeping old replies does not make the bot forget where it takes part.
    CREATE TABLE reply_threads (
      channel TEXT NOT NULL,
      chat_id TEXT NOT NULL,
      thread_id TEXT NOT NULL,
      last_at INTEGER NOT NULL,
      PRIMARY KEY (channel, chat_id, thread_id)
    ) STRICT, WITHOUT ROWID;
    INSERT OR IGNORE INTO reply_threads (channel, chat_id, thread_id, last_at)
      SELECT channel, chat_id, thread_id, MAX(updated_at) FROM outbox WHERE thread_id IS NOT NULL GROUP BY channel, chat_id, thread_id;
    `,
  },
  {
    version: 6,
    name: "long-term memory",
    sql: `
    -- Facts the assistant keeps across conversations. scope: 'owner' (the operator on every
    -- channel, the CLI and ACP) or '<channel>:<sender>' for anyone else: one scope never sees another's.
    CREATE TABLE memories (
      id INTEGER PRIMARY KEY,
      scope TEXT NOT NULL,
      text TEXT NOT NULL,
      conversation TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      last_used_at INTEGER
    ) STRICT;
    CREATE INDEX memories_scope ON memories (scope, created_at);

    -- Full-text index over the facts (bm25 ranking), kept in step with the table by triggers.
    CREATE VIRTUAL TABLE memories_fts USING fts5(text, content = 'memories', content_rowid = 'id', tokenize = 'porter unicode61');
    CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
      INSERT INTO memories_fts (rowid, text) VALUES (new.id, new.text);
    END;
    CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
      INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.id, old.text);
    END;
    CREATE TRIGGER memories_au AFTER UPDATE OF text ON memories BEGIN
      INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.id, old.text);
      INSERT INTO memories_fts (rowid, text) VALUES (new.id, new.text);
    END;
    `,
  },
  {
    version: 7,
    name: "scheduled jobs",
    sql: `
    -- Jobs the assistant runs later, once (schedule NULL) or on a cron schedule. A run is claimed
    -- (state 'running', run_due_at = the due time it is for) before it starts, so one due time runs
    -- once; a run a crash interrupted is still 'running' at the next start and runs again, its
    -- delivery keyed by (job, run_due_at) in the outbox so the user gets it once.
    CREATE TABLE jobs (
      id INTEGER PRIMARY KEY,
      request TEXT NOT NULL,
      schedule TEXT,
      timezone TEXT NOT NULL,
      due_at INTEGER NOT NULL,
      run_due_at INTEGER,
      state TEXT NOT NULL CHECK (state IN ('pending', 'running', 'done', 'cancelled')),
      origin_channel TEXT NOT NULL,
      origin_conversation TEXT NOT NULL,
      origin_sender TEXT NOT NULL,
      origin_role TEXT NOT NULL CHECK (origin_role IN ('operator', 'user')),
      target_channel TEXT NOT NULL,
      target_chat TEXT NOT NULL,
      target_thread TEXT,
      runs INTEGER NOT NULL DEFAULT 0,
      last_run_at INTEGER,
      last_outcome TEXT,
      created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL
    ) STRICT;
    CREATE INDEX jobs_due ON jobs (due_at) WHERE state IN ('pending', 'running');
    `,
  },
  {
    version: 8,
    name: "sandbox: grants, env rules, presets, settings",
    sql: `
    -- Paths outside the workspace the agent's tools may reach, and who allowed it.
    CREATE TABLE sandbox_grants (
      path TEXT PRIMARY KEY,
      mode TEXT NOT NULL CHECK (mode IN ('ro', 'rw')),
      granted_by TEXT NOT NULL,
      granted_at INTEGER NOT NULL
    ) STRICT, WITHOUT ROWID;

    -- What run_command's environment is built from: names passed through, names kept out, values set.
    CREATE TABLE sandbox_env (
      name TEXT PRIMARY KEY,
      rule TEXT NOT NULL CHECK (rule IN ('allow', 'deny', 'set')),
      value TEXT,
      changed_by TEXT NOT NULL,
      changed_at INTEGER NOT NULL
    ) STRICT, WITHOUT ROWID;

    -- Command presets switched on (git, node, python…); the bundles themselves are defined in code.
    CREATE TABLE sandbox_presets (
      name TEXT PRIMARY KEY,
      enabled_by TEXT NOT NULL,
      enabled_at INTEGER NOT NULL
    ) STRICT, WITHOUT ROWID;

    -- Single values such as network on/off; absent: the config default applies.
    CREATE TABLE sandbox_settings (
      key TEXT PRIMARY KEY,
      value TEXT NOT NULL,
      changed_by TEXT NOT NULL,
      changed_at INTEGER NOT NULL
    ) STRICT, WITHOUT ROWID;
    `,
  },
  {
    version: 9,
    name: "soul revisions and proposals",
    sql: `
    -- Every text SOUL.md has had, oldest first: the revision number is the row id. origin says
    -- how it came about; note holds what the owner should see beside it (a review's instruction,
    -- the revision a revert went back to).
    CREATE TABLE soul_revisions (
      id INTEGER PRIMARY KEY,
      origin TEXT NOT NULL CHECK (origin IN ('initial', 'review', 'revert', 'reset', 'manual')),
      note TEXT,
      text TEXT NOT NULL,
      created_at INTEGER NOT NULL
    ) STRICT;

    -- /soul proposals waiting for "/soul apply TOKEN": single use (used_at), bound to the sender
    -- and the conversation that made them, until expires_at. Only a hash of the token is kept.
    CREATE TABLE soul_proposals (
      token_hash TEXT PRIMARY KEY,
      kind TEXT NOT NULL CHECK (kind IN ('review', 'revert', 'reset')),
      note TEXT,
      base_revision INTEGER NOT NULL,
      text TEXT NOT NULL,
      channel TEXT NOT NULL,
      sender_id TEXT NOT NULL,
      conversation TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      expires_at INTEGER NOT NULL,
      used_at INTEGER
    ) STRICT, WITHOUT ROWID;
    CREATE INDEX soul_proposals_expiry ON soul_proposals (expires_at);
    `,
  },
  {
    version: 10,
    name: "skills: state, proposals, changes",
    sql: `
    -- The skills in <workspace>/skills/ as Fermix keeps track of them (the folders hold the texts):
    -- offered (active) or not (parked after park_after_days unused, archived by the owner), how often
    -- use_skill loaded each, and a hash of SKILL.md as last recorded, so an edit by hand is noticed.
    -- A skill unused since max(active_since, last_used_at) for park_after_days is parked.
    CREATE TABLE skills (
      name TEXT PRIMARY KEY,
      state TEXT NOT NULL CHECK (state IN ('active', 'parked', 'archived')),
      uses INTEGER NOT NULL DEFAULT 0,
      last_used_at INTEGER,
      active_since INTEGER NOT NULL,
      text_hash TEXT NOT NULL,
      updated_at INTEGER NOT NULL
    ) STRICT, WITHOUT ROWID;

    -- New skills and changes the agent proposed (propose_skill); they take effect only when the
    -- owner approves them. base_text is SKILL.md when the proposal was made (NULL: a new skill).
    CREATE TABLE skill_proposals (
      id INTEGER PRIMARY KEY,
      name TEXT NOT NULL,
      content TEXT NOT NULL,
      reason TEXT NOT NULL,
      base_text TEXT,
      state TEXT NOT NULL CHECK (state IN ('pending', 'approved', 'denied')),
      channel TEXT NOT NULL,
      sender_id TEXT NOT NULL,
      conversation TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      decided_at INTEGER,
      decided_by TEXT
    ) STRICT;
    CREATE INDEX skill_proposals_pending ON skill_proposals (id) WHERE state = 'pending';

    -- Every change to a skill, oldest first, with where it came from: the owner (actor: channel:sender),
    -- the agent (a proposal), the folder on disk (a skill added, edited or removed by hand), or the
    -- daemon itself (automatic parking).
    CREATE TABLE skill_changes (
      id INTEGER PRIMARY KEY,
      name TEXT NOT NULL,
      change TEXT NOT NULL CHECK (change IN ('found', 'edited', 'removed', 'proposed', 'approved', 'denied', 'archived', 'restored', 'parked', 'unparked')),
      origin TEXT NOT NULL CHECK (origin IN ('owner', 'agent', 'disk', 'automatic')),
      actor TEXT,
      proposal_id INTEGER,
      note TEXT,
      at INTEGER NOT NULL
    ) STRICT;
    CREATE INDEX skill_changes_name ON skill_changes (name, id);
    `,
  },
  {
    version: 11,
    name: "message senders",
    sql: `
    -- Who sent each user message, so a window of "the owner's recent messages" (/soul review
    -- --with-context) can leave out everyone else in a group. NULL for messages written before this
    -- version and for the assistant's own messages. No index of its own: only /soul review reads it, through
    -- the conversation's index, while every turn would pay for keeping one.
    ALTER TABLE messages ADD COLUMN sender_id TEXT;
    `,
  },
  {
    version: 12,
    name: "confirmation codes",
    sql: `
    -- The codes behind /confirm TOKEN, /sandbox deny TOKEN and the Approve buttons (src/gateway/confirm.ts
    -- keeps the rules): a /sandbox proposal or an access request the agent made, bound to the owner
    -- (channel, sender_id) and the conversation it was made for, single use, until expires_at. grants is
    -- the change a confirmation applies, as JSON (a value set under a secret-looking name is dropped
    -- from it once the code is decided). The code itself is kept, not a hash: /sandbox lists the pending
    -- ones to their owner. holder is the process whose turn waits for an access request
    -- ("<pid>:<instance>"): when it is gone, the request ended with it. Decided and expired rows are
    -- kept about an hour, so a late or second use is refused in plain words, then swept.
    CREATE TABLE confirmation_codes (
      id INTEGER PRIMARY KEY,
      code TEXT NOT NULL UNIQUE,
      kind TEXT NOT NULL CHECK (kind IN ('proposal', 'access')),
      channel TEXT NOT NULL,
      sender_id TEXT NOT NULL,
      conversation TEXT NOT NULL,
      summary TEXT NOT NULL,
      grants TEXT NOT NULL,
      holder TEXT,
      created_at INTEGER NOT NULL,
      expires_at INTEGER NOT NULL,
      state TEXT NOT NULL CHECK (state IN ('pending', 'confirmed', 'denied', 'failed', 'expired', 'withdrawn', 'ended')),
      decided_at INTEGER
    ) STRICT;
    CREATE INDEX confirmation_codes_pending ON confirmation_codes (id) WHERE state = 'pending';
    CREATE INDEX confirmation_codes_ended ON confirmation_codes (coalesce(decided_at, expires_at));
    `,
  },
  {
    version: 13,
    name: "shared chats: senders shown, tools switched on per chat",
    sql: `
    -- Who said each user message, as the model is shown it: the sender's display name, and whether the
    -- sender was trusted (1: the owner, or an operator in a direct chat) or not (0: anyone else, whose words
    -- reach the model marked as untrusted). NULL for messages written before this version.
    ALTER TABLE messages ADD COLUMN sender_name TEXT;
    ALTER TABLE messages ADD COLUMN sender_trusted INTEGER;

    -- Shared chats where the owner switched on the tools that change or send anything (/sandbox chat on,
    -- confirmed): absent, the owner's turns there only read. One row per chat that has them on.
    CREATE TABLE sandbox_shared_chats (
      channel TEXT NOT NULL,
      chat_id TEXT NOT NULL,
      enabled_by TEXT NOT NULL,
      enabled_at INTEGER NOT NULL,
      PRIMARY KEY (channel, chat_id)
    ) STRICT, WITHOUT ROWID;
    `,
  },
  {
    version: 14,
    name: "idempotency keys remember when they were seen",
    sql: `
    -- An inbound key lives as long as its channel accepts a message (src/store/idempotency.ts): at
    -- least the time to live in force when it was written (expires_at), and at least the one in force
    -- when it is swept, counted from seen_at — so a wider window after a reload covers keys already
    -- written. Rows from before this version were written with the fixed times of then.
    ALTER TABLE idempotency ADD COLUMN seen_at INTEGER NOT NULL DEFAULT 0;
    UPDATE idempotency SET seen_at = expires_at - CASE scope WHEN 'inbound' THEN 86400000 ELSE 60000 END;
    `,
  },
  {
    version: 15,
    name: "outbox purposes and held parts",
    sql: `
    -- What each outbox row is for, as a typed column (src/store/outbox.ts OUTBOX_PURPOSES) instead of
    -- meaning read from its key's shape: the key stays an identity (one reply, idempotent per part).
    -- Rows from before this version get theirs from the key shapes the code wrote then: a notice that an
    -- answer was undelivered (…:undelivered), a file's text sent instead (…:inline<n>), attachments a
    -- background task or job sent as it ran (bg:…:media, job:…:media), a line beside an answer (…:n<i>),
    -- a background result (bg:…), a scheduled job's result (job:…); everything else answers a message.
    ALTER TABLE outbox ADD COLUMN purpose TEXT NOT NULL DEFAULT 'reply'
      CHECK (purpose IN ('reply', 'notice', 'background', 'job', 'media', 'inline_fallback', 'undelivered_notice'));
    UPDATE outbox SET purpose = CASE
      WHEN reply_key GLOB '*:undelivered' THEN 'undelivered_notice'
      WHEN rtrim(reply_key, '0123456789') GLOB '*:inline' AND rtrim(reply_key, '0123456789') <> reply_key THEN 'inline_fallback'
      WHEN reply_key GLOB 'bg:*:media' OR reply_key GLOB 'job:*:media' THEN 'media'
      WHEN rtrim(reply_key, '0123456789') GLOB '*:n' AND rtrim(reply_key, '0123456789') <> reply_key THEN 'notice'
      WHEN reply_key GLOB 'bg:*' THEN 'background'
      WHEN reply_key GLOB 'job:*' THEN 'job'
      ELSE 'reply'
    END;

    -- When a part's sends began to fail (epoch ms; NULL while none has): a part the platform keeps
    -- refusing while the chat takes other calls is set aside hold_seconds after it (src/gateway/delivery/),
    -- counted across restarts.
    ALTER TABLE outbox ADD COLUMN first_failed_at INTEGER;
    `,
  },
];

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
];

/**
 * Command presets: named bundles that widen what run_command may reach for
 * one kind of work — extra read-only paths (a toolchain under the home
 * directory), variables passed through or set, and the network when the
 * work needs it (installing packages). `/sandbox preset on NAME` switches
 * one on; a preset that opens the network is a risky change.
 */

export interface Preset {
  name: string;
  summary: string;
  /** Read-only paths, `~/` relative to the home directory; those that do not exist are skipped. */
  readOnly: readonly string[];
  /** Directories put in front of PATH (`~/` relative to the home directory). */
  path: readonly string[];
  /** Daemon variables passed through when set. */
  envAllow: readonly string[];
  /** Variables set for every command. */
  envSet: Readonly<Record<string, string>>;
  network: boolean;
}

export const PRESETS: readonly Preset[] = [
  {
    name: "git",
    summary: "your git identity and config (read-only); no network",
    readOnly: ["~/.gitconfig", "~/.config/git"],
    path: [],
    envAllow: ["GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"],
    envSet: { GIT_TERMINAL_PROMPT: "0" },
    network: false,
  },
  {
    name: "node",
    summary: "Node.js, npm and Bun toolchains under your home (read-only), a private npm cache; network on",
    readOnly: ["~/.nvm", "~/.bun/bin", "~/.volta", "~/.local/share/fnm", "/opt/homebrew"],
    path: ["~/.bun/bin", "~/.volta/bin"],
    envAllow: ["NVM_DIR", "NODE_OPTIONS"],
    envSet: { npm_config_cache: "/tmp/.npm", npm_config_update_notifier: "false" },
    network: true,
  },
  {
    name: "python",
    summary: "pyenv and user-installed Python packages (read-only), a private pip cache; network on",
    readOnly: ["~/.pyenv", "~/.local/lib", "~/.local/bin", "/opt/homebrew"],
    path: ["~/.pyenv/shims", "~/.local/bin"],
    envAllow: ["PYENV_ROOT", "VIRTUAL_ENV"],
    envSet: { PIP_CACHE_DIR: "/tmp/.pip", PYTHONDONTWRITEBYTECODE: "1" },
    network: true,
  },
  {
    name: "rust",
    summary: "the Rust toolchain under ~/.cargo and ~/.rustup (read-only); network on",
    readOnly: ["~/.cargo/bin", "~/.rustup"],
    path: ["~/.cargo/bin"],
    envAllow: ["RUSTUP_HOME"],
    envSet: { CARGO_HOME: "/tmp/.cargo" },
    network: true,
  },
  {
    name: "go",
    summary: "the Go toolchain (read-only), a private module cache; network on",
    readOnly: ["~/go/bin", "~/sdk"],
    path: ["~/go/bin"],
    envAllow: ["GOPROXY", "GOFLAGS"],
    envSet: { GOPATH: "/tmp/go", GOCACHE: "/tmp/.gocache" },
    network: true,
  },
];

/** The preset of that name, or undefined. */
export function findPreset(name: string): Preset | undefined {
  return PRESETS.find((p) => p.name === name.toLowerCase());
}

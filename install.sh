#!/usr/bin/env sh
# Install fermix.
#
# From a checkout:   ./install.sh            (installs Bun if missing, builds, installs dist/fermix)
# Without one:       curl -fsSL <release-url>/install.sh | sh
#                    (downloads the release archive for this OS and architecture,
#                    verifies it against the release's SHA256SUMS, unpacks it)
#
# Idempotent: running it again upgrades the binary in place (the installed one
# stays when the new one does not run) and leaves your shell rc alone when the
# install directory is already on PATH or the line is already there.
set -eu

BUN_VERSION="1.4.4"
DEFAULT_RELEASE_URL="https://github.com/fermix-ai/fermix/releases"

usage() {
  cat <<USAGE
Usage: install.sh [options]

Installs the fermix binary into a directory on your PATH.

From a source checkout it makes sure Bun ${BUN_VERSION} is present (installing it
with npm when it is missing), installs dependencies, builds dist/fermix and
copies it. Piped from curl with no checkout, it downloads the release archive
for this platform, verifies its SHA-256 checksum and unpacks it. An existing
fermix is upgraded in place; it is kept when the new one does not run.

Options:
  --dir DIR           install into DIR (default: \$FERMIX_INSTALL_DIR or ~/.local/bin)
  --version VERSION   release to download (no-checkout mode; default: latest)
  --no-modify-path    do not add the install directory to your shell rc file
  --release           download the release binary even inside a checkout
  -h, --help          show this help

Environment:
  FERMIX_INSTALL_DIR  default install directory
  FERMIX_RELEASE_URL  base URL of the releases (default ${DEFAULT_RELEASE_URL});
                      archives are fetched from <url>/download/v<version>/fermix-<os>-<arch>.tar.xz
                      or <url>/latest/download/fermix-<os>-<arch>.tar.xz, beside SHA256SUMS
USAGE
}

say() { printf 'install.sh: %s\n' "$*"; }
die() { printf 'install.sh: error: %s\n' "$*" >&2; exit 1; }

INSTALL_DIR="${FERMIX_INSTALL_DIR:-${HOME:?HOME is not set}/.local/bin}"
VERSION=""
MODIFY_PATH=1
FORCE_RELEASE=0

while [ $# -gt 0 ]; do
  case "$1" in
    --dir) [ $# -ge 2 ] || die "--dir needs a directory"; INSTALL_DIR="$2"; shift 2 ;;
    --dir=*) INSTALL_DIR="${1#--dir=}"; shift ;;
    --version) [ $# -ge 2 ] || die "--version needs a version"; VERSION="${2#v}"; shift 2 ;;
    --version=*) VERSION="${1#--version=}"; VERSION="${VERSION#v}"; shift ;;
    --no-modify-path) MODIFY_PATH=0; shift ;;
    --release) FORCE_RELEASE=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done

# A checkout is the directory this script lives in, when it holds fermix's package.json.
SCRIPT_DIR=""
case "$0" in
  */*) SCRIPT_DIR=$(CDPATH= cd -- "$(dirname -- "$0")" 2>/dev/null && pwd) || SCRIPT_DIR="" ;;
esac
IN_CHECKOUT=0
if [ -n "$SCRIPT_DIR" ] && [ -f "$SCRIPT_DIR/package.json" ] && grep -q '"name": "fermix"' "$SCRIPT_DIR/package.json" 2>/dev/null; then
  IN_CHECKOUT=1
fi
[ "$FORCE_RELEASE" = 1 ] && IN_CHECKOUT=0

detect_platform() {
  case "$(uname -s)" in
    Linux) OS=linux ;;
    Darwin) OS=darwin ;;
    *) die "unsupported operating system $(uname -s): fermix ships for Linux and macOS" ;;
  esac
  case "$(uname -m)" in
    x86_64|amd64) ARCH=x64 ;;
    arm64|aarch64) ARCH=arm64 ;;
    *) die "unsupported architecture $(uname -m): fermix ships for x64 and arm64" ;;
  esac
}

ensure_bun() {
  if command -v bun >/dev/null 2>&1; then
    have=$(bun --version 2>/dev/null || echo unknown)
    [ "$have" = "$BUN_VERSION" ] || say "using bun $have (fermix is tested with $BUN_VERSION)"
    return
  fi
  command -v npm >/dev/null 2>&1 || die "Bun is not installed and npm is not available to install it; install Node.js (with npm) or Bun ${BUN_VERSION} first"
  say "installing bun@${BUN_VERSION} with npm"
  # Bun's postinstall must run: --ignore-scripts would leave a stub binary.
  npm install -g "bun@${BUN_VERSION}" >/dev/null 2>&1 || npm install -g --allow-scripts=bun "bun@${BUN_VERSION}" \
    || die "npm could not install bun@${BUN_VERSION} (try: sudo npm install -g bun@${BUN_VERSION})"
  command -v bun >/dev/null 2>&1 || die "bun was installed but is not on PATH; add \"$(npm prefix -g)/bin\" to PATH"
}

build_from_checkout() {
  ensure_bun
  cd "$SCRIPT_DIR"
  say "installing dependencies"
  bun install --frozen-lockfile >/dev/null || die "bun install failed"
  say "building dist/fermix"
  bun build.ts >/dev/null || die "the build failed; run 'bun run build' to see why"
  SOURCE="$SCRIPT_DIR/dist/fermix"
}

fetch() {
  if command -v curl >/dev/null 2>&1; then
    curl -fsSL "$1" -o "$2"
  elif command -v wget >/dev/null 2>&1; then
    wget -q "$1" -O "$2"
  else
    die "neither curl nor wget is available to download fermix"
  fi
}

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | awk '{ print $1 }'
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | awk '{ print $1 }'
  else
    die "neither sha256sum nor shasum is available to verify the download"
  fi
}

download_release() {
  detect_platform
  command -v tar >/dev/null 2>&1 || die "tar is needed to unpack the release"
  command -v xz >/dev/null 2>&1 || die "xz is needed to unpack the release (Debian/Ubuntu: apt install xz-utils; Fedora: dnf install xz)"
  base="${FERMIX_RELEASE_URL:-$DEFAULT_RELEASE_URL}"
  asset="fermix-${OS}-${ARCH}.tar.xz"
  if [ -n "$VERSION" ]; then dir="$base/download/v${VERSION}"; else dir="$base/latest/download"; fi
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/fermix.XXXXXX")
  trap 'rm -rf "$WORK"' EXIT
  say "downloading $dir/$asset"
  fetch "$dir/$asset" "$WORK/$asset" || die "download failed: $dir/$asset"
  fetch "$dir/SHA256SUMS" "$WORK/SHA256SUMS" || die "cannot download $dir/SHA256SUMS to verify $asset; nothing was installed"
  expected=$(awk -v a="$asset" '$2 == a || $2 == ("*" a) { print $1; exit }' "$WORK/SHA256SUMS")
  [ -n "$expected" ] || die "SHA256SUMS lists no checksum for $asset; nothing was installed"
  actual=$(sha256_of "$WORK/$asset")
  [ "$actual" = "$expected" ] || die "checksum mismatch for $asset (SHA256SUMS says $expected, the download is $actual): corrupted or tampered with; nothing was installed"
  say "verified $asset: sha256 $actual matches SHA256SUMS"
  tar -xJf "$WORK/$asset" -C "$WORK" fermix || die "cannot unpack $asset"
  SOURCE="$WORK/fermix"
}

add_to_path() {
  case ":${PATH}:" in *":$INSTALL_DIR:"*) return ;; esac
  [ "$MODIFY_PATH" = 1 ] || { say "add $INSTALL_DIR to your PATH to run fermix by name"; return; }
  case "$(basename "${SHELL:-sh}")" in
    zsh) rc="$HOME/.zshrc" ;;
    bash) rc="$HOME/.bashrc" ;;
    fish) rc="$HOME/.config/fish/config.fish" ;;
    *) rc="$HOME/.profile" ;;
  esac
  if [ "$(basename "${SHELL:-sh}")" = fish ]; then line="fish_add_path $INSTALL_DIR"; else line="export PATH=\"$INSTALL_DIR:\$PATH\""; fi
  mkdir -p "$(dirname "$rc")"
  if [ -f "$rc" ] && grep -F -q "$line" "$rc"; then return; fi
  printf '\n# fermix\n%s\n' "$line" >> "$rc"
  say "added $INSTALL_DIR to PATH in $rc (open a new shell, or run: $line)"
}

# Whether the directory was on PATH before this script ran: then `fermix` works by name right away.
case ":${PATH}:" in *":$INSTALL_DIR:"*) ON_PATH=1 ;; *) ON_PATH=0 ;; esac

if [ "$IN_CHECKOUT" = 1 ]; then build_from_checkout; else download_release; fi

mkdir -p "$INSTALL_DIR" || die "cannot create $INSTALL_DIR"
TARGET="$INSTALL_DIR/fermix"
OLD=""
[ -x "$TARGET" ] && OLD=$("$TARGET" --version 2>/dev/null || true)
# Copy next to the target, check that it runs there, then rename over the old one:
# a running fermix is never left with a half-written binary, and a new one that
# does not run never replaces one that does.
cp "$SOURCE" "$INSTALL_DIR/.fermix.new" && chmod 755 "$INSTALL_DIR/.fermix.new" || die "cannot write $INSTALL_DIR"
if ! NEW=$("$INSTALL_DIR/.fermix.new" --version 2>/dev/null) || [ -z "$NEW" ]; then
  rm -f "$INSTALL_DIR/.fermix.new"
  [ -n "$OLD" ] && die "the new fermix does not run on this machine ($(uname -s) $(uname -m)); kept the installed one: $OLD"
  die "the new fermix does not run on this machine ($(uname -s) $(uname -m))"
fi
mv -f "$INSTALL_DIR/.fermix.new" "$TARGET" || die "cannot write $TARGET"
if [ -n "$OLD" ]; then say "upgraded $TARGET: $OLD -> $NEW"; else say "installed $NEW to $TARGET"; fi
if [ -n "$OLD" ] && { [ -f "${XDG_CONFIG_HOME:-$HOME/.config}/systemd/user/fermix.service" ] || [ -f "$HOME/Library/LaunchAgents/ai.fermix.daemon.plist" ]; }; then
  say "the service still runs the previous binary: restart it with: fermix service install"
fi
add_to_path
if [ "$ON_PATH" = 1 ]; then say "next: fermix setup"; else say "next: $TARGET setup"; fi

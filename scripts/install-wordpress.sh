#!/usr/bin/env bash
# The real WordPress stack that the sandbox, the integration tests and the benchmarks run on.
# Idempotent; a second run only checks (a few seconds).
#
#   1. Debian packages (apt-get, as root or with sudo): PHP CLI with the extensions WordPress uses,
#      MariaDB, Debian's `wordpress` files with its bundled themes and Japanese language files.
#   2. WP-CLI: $WP_CLI_PHAR if set, else ../shared/wp-cli/wp-cli.phar (next to the checkout; or
#      $WP_CLI_SHARED_PHAR), else the official release download ($WP_CLI_DOWNLOAD_URL for a mirror).
#      Its SHA-512 must equal the pin in the package
#      (layers/core/wp_agent/sandbox/wp-cli.sha512) in every case; it is copied to
#      $VENV/share/wp-agent/wp-cli.phar, where wp-agent looks for it (and checks it again).
#   3. The sandbox: its private MariaDB is started directly (no systemd, `--user=root` as root) and the
#      seeded sample site is provisioned once (`wp-agent sandbox start`), so `make ask` answers at once.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV="${VENV:-.venv}"
PIN_FILE="layers/core/wp_agent/sandbox/wp-cli.sha512"
PHAR_DEST="$VENV/share/wp-agent/wp-cli.phar"
read -r EXPECTED_SHA512 PINNED_NAME < "$PIN_FILE"
WP_CLI_VERSION="${PINNED_NAME#wp-cli-}"
WP_CLI_VERSION="${WP_CLI_VERSION%.phar}"
DOWNLOAD_URL="${WP_CLI_DOWNLOAD_URL:-https://github.com/wp-cli/wp-cli/releases/download/v${WP_CLI_VERSION}/${PINNED_NAME}}"

PACKAGES=(
  php-cli php-mysql php-gd php-curl php-mbstring php-xml php-zip php-intl
  mariadb-server mariadb-client
  wordpress wordpress-l10n
  wordpress-theme-twentytwentyone wordpress-theme-twentytwentytwo wordpress-theme-twentytwentythree
)

say() { echo "install-wordpress: $*"; }
fail() { echo "install-wordpress: $*" >&2; exit 1; }

install_packages() {
  local missing=() package
  for package in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || fail "missing Debian packages (${missing[*]}) and neither root nor sudo; install them with apt-get"
    sudo="sudo"
  fi
  say "installing ${missing[*]} with apt-get"
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

sha512_of() { sha512sum "$1" | cut -d' ' -f1; }

# Prints the path of a WP-CLI phar to install (downloaded into $1 when no local copy exists).
find_phar() {
  if [ -n "${WP_CLI_PHAR:-}" ]; then
    [ -f "$WP_CLI_PHAR" ] || fail "WP_CLI_PHAR=$WP_CLI_PHAR is not a file"
    echo "$WP_CLI_PHAR"
    return
  fi
  local shared="${WP_CLI_SHARED_PHAR:-$(cd .. && pwd)/shared/wp-cli/wp-cli.phar}"
  if [ -f "$shared" ]; then
    echo "$shared"
    return
  fi
  say "downloading WP-CLI $WP_CLI_VERSION from $DOWNLOAD_URL" >&2
  if command -v curl >/dev/null; then
    curl -fsSL --retry 3 -o "$1" "$DOWNLOAD_URL" || fail "downloading $DOWNLOAD_URL failed; set WP_CLI_PHAR to a copy of WP-CLI $WP_CLI_VERSION"
  else
    python3 -c 'import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], sys.argv[2])' "$DOWNLOAD_URL" "$1" \
      || fail "downloading $DOWNLOAD_URL failed; set WP_CLI_PHAR to a copy of WP-CLI $WP_CLI_VERSION"
  fi
  echo "$1"
}

install_wp_cli() {
  if [ -f "$PHAR_DEST" ] && [ -z "${WP_CLI_PHAR:-}" ] && [ "$(sha512_of "$PHAR_DEST")" = "$EXPECTED_SHA512" ]; then
    return 0
  fi
  local download source actual
  download="$(mktemp)"
  trap 'rm -f "$download"' RETURN
  source="$(find_phar "$download")"
  actual="$(sha512_of "$source")"
  if [ "$actual" != "$EXPECTED_SHA512" ]; then
    fail "refusing $source: its SHA-512 is $actual, but WP-CLI $WP_CLI_VERSION is pinned to $EXPECTED_SHA512 ($PIN_FILE). Use the official WP-CLI $WP_CLI_VERSION phar."
  fi
  mkdir -p "$(dirname "$PHAR_DEST")"
  install -m 0644 "$source" "$PHAR_DEST.tmp"
  mv -f "$PHAR_DEST.tmp" "$PHAR_DEST"
  say "WP-CLI $WP_CLI_VERSION (SHA-512 verified) from $source"
}

install_packages
install_wp_cli
if [ -x "$VENV/bin/wp-agent" ] && [ "${WP_AGENT_SKIP_SANDBOX_START:-0}" != "1" ]; then
  "$VENV/bin/wp-agent" sandbox start
fi

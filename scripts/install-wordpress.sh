#!/usr/bin/env bash
# The real WordPress stack that the sandbox, the integration tests and the benchmarks run on, installed
# by `wp-agent sandbox install` (layers/core/wp_agent/sandbox/install.py). Idempotent; a second run
# only checks (a few seconds).
#
#   1. Debian packages (apt-get, as root or with sudo): PHP CLI with the extensions WordPress uses,
#      MariaDB, Debian's `wordpress` files with its bundled themes and Japanese language files.
#   2. WP-CLI: $WP_CLI_PHAR if set, else ../shared/wp-cli/wp-cli.phar (next to the checkout; or
#      $WP_CLI_SHARED_PHAR), else the official release download ($WP_CLI_DOWNLOAD_URL for a mirror).
#      Its SHA-512 must equal the pin in the package (layers/core/wp_agent/sandbox/wp-cli.sha512) in
#      every case; it is copied to $VENV/share/wp-agent/wp-cli.phar, where wp-agent looks for it.
#   3. The sandbox: its private MariaDB is started directly (no systemd, `--user=root` as root) and the
#      seeded sample site is provisioned once, so `make ask` answers at once
#      (WP_AGENT_SKIP_SANDBOX_START=1 skips this step).
set -euo pipefail
cd "$(dirname "$0")/.."

VENV="${VENV:-.venv}"
args=(sandbox install)
if [ -z "${WP_CLI_PHAR:-}" ]; then
  shared="${WP_CLI_SHARED_PHAR:-$(cd .. && pwd)/shared/wp-cli/wp-cli.phar}"
  [ -f "$shared" ] && args+=(--phar "$shared")
fi
[ "${WP_AGENT_SKIP_SANDBOX_START:-0}" = "1" ] && args+=(--no-start)
exec "$VENV/bin/wp-agent" "${args[@]}"

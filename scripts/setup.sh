#!/usr/bin/env bash
# One-time (idempotent) setup for a fresh machine: system packages, the virtualenv, the locked deps,
# and the real WordPress stack with the sandbox (scripts/install-wordpress.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

VENV="${VENV:-.venv}"
PYTHON="${PYTHON:-python3}"

# apt_install <what is missing> <package>...: Debian packages, as root or with sudo.
apt_install() {
  local missing="$1"
  shift
  if [ "$(id -u)" -eq 0 ]; then SUDO=""; elif command -v sudo >/dev/null; then SUDO="sudo"; else
    echo "setup: $missing is missing and neither root nor sudo is available; install $*" >&2
    exit 1
  fi
  echo "setup: installing $* with apt-get"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# OpenSSH server: the integration tests run a real sshd on 127.0.0.1.
[ -x /usr/sbin/sshd ] || apt_install /usr/sbin/sshd openssh-server openssh-client
# faketime: the date-sensitive tests also run at other dates (tests/integration/test_any_date.py).
command -v faketime >/dev/null || apt_install faketime faketime

if [ ! -x "$VENV/bin/python" ]; then
  echo "setup: creating $VENV with $($PYTHON --version)"
  "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet --upgrade "pip>=24"
echo "setup: installing wp-agent and its locked dependencies"
# uv installs the same locked set as pip in seconds instead of most of a minute (a fresh clone's
# `make test` pays this every time); pip does it when uv cannot be had.
if ! { "$VENV/bin/python" -m pip install --quiet -c constraints.txt uv &&
  "$VENV/bin/uv" pip install --quiet --python "$VENV/bin/python" -c constraints.txt -e ".[dev,infra,local]"; }; then
  echo "setup: uv could not install them; installing with pip"
  "$VENV/bin/python" -m pip install --quiet -c constraints.txt -e ".[dev,infra,local]"
fi

# The TypeScript client check of the API contract (tests/integration/test_generated_client.py):
# openapi-typescript, openapi-fetch and TypeScript at the versions package-lock.json pins.
if ! command -v npm >/dev/null; then apt_install npm nodejs npm; fi
echo "setup: installing the contract client's npm packages (locked)"
npm ci --prefix tests/contract_client --no-audit --no-fund --ignore-scripts --loglevel=error >/dev/null

# PHP, MariaDB, Debian's WordPress, the verified WP-CLI phar; then the sandbox is started and seeded.
VENV="$VENV" ./scripts/install-wordpress.sh

#!/usr/bin/env bash
# One-time (idempotent) setup for a fresh machine: system packages, the virtualenv, the locked deps.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV="${VENV:-.venv}"
PYTHON="${PYTHON:-python3}"

# OpenSSH server: the integration tests run a real sshd on 127.0.0.1.
if [ ! -x /usr/sbin/sshd ]; then
  if [ "$(id -u)" -eq 0 ]; then SUDO=""; elif command -v sudo >/dev/null; then SUDO="sudo"; else SUDO="none"; fi
  if [ "$SUDO" = "none" ]; then
    echo "setup: /usr/sbin/sshd is missing and neither root nor sudo is available; install openssh-server" >&2
    exit 1
  fi
  echo "setup: installing openssh-server with apt-get"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openssh-server openssh-client >/dev/null
fi

# PHP: tests check our WP-CLI tables against the real WP-CLI phar (extracted with PHP's Phar class).
if ! command -v php >/dev/null; then
  if [ "$(id -u)" -eq 0 ]; then SUDO=""; elif command -v sudo >/dev/null; then SUDO="sudo"; else SUDO="none"; fi
  if [ "$SUDO" = "none" ]; then
    echo "setup: php is missing and neither root nor sudo is available; install php-cli" >&2
    exit 1
  fi
  echo "setup: installing php-cli with apt-get"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends php-cli >/dev/null
fi

if [ ! -x "$VENV/bin/python" ]; then
  echo "setup: creating $VENV with $($PYTHON --version)"
  "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet --upgrade "pip>=24"
echo "setup: installing wp-agent and its locked dependencies"
"$VENV/bin/python" -m pip install --quiet -c constraints.txt -e ".[dev,infra]"

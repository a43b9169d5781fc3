#!/usr/bin/env bash
# Emacs 28 + eglot 1.9 from Debian, for tests/e2e/test_eglot.py (batch Emacs, no X).
# Idempotent: does nothing when emacs and eglot are already there.
set -euo pipefail

if command -v emacs >/dev/null 2>&1 && emacs -q --batch --eval "(require 'eglot)" >/dev/null 2>&1; then
  echo "30-emacs: emacs with eglot already installed"
  exit 0
fi

export DEBIAN_FRONTEND=noninteractive
start=$(date +%s)
# Wait for the dpkg lock rather than fail when another install script holds it.
apt-get -o DPkg::Lock::Timeout=600 update -qq
apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends emacs-nox elpa-eglot >/dev/null
echo "30-emacs: installed emacs-nox + elpa-eglot in $(( $(date +%s) - start )) s"
emacs --version | head -1

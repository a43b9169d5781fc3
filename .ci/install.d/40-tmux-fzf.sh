#!/usr/bin/env bash
# tmux (a real terminal for Neovim's UI in tests/e2e/test_neovim_pickers.py) and fzf (for the
# fzf-lua case, which runs only where an fzf-lua checkout is; see that test). From Debian.
# Idempotent: does nothing when both are there.
set -euo pipefail

if command -v tmux >/dev/null 2>&1 && command -v fzf >/dev/null 2>&1; then
  echo "40-tmux-fzf: tmux and fzf already installed"
  exit 0
fi

export DEBIAN_FRONTEND=noninteractive
start=$(date +%s)
apt-get -o DPkg::Lock::Timeout=600 update -qq
apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends tmux fzf >/dev/null
echo "40-tmux-fzf: installed tmux + fzf in $(( $(date +%s) - start )) s"

#!/usr/bin/env bash
# code-server 4.99.4 (VS Code 1.99 in a browser) on Node 20, Debian chromium and
# playwright-core: what tests/e2e/test_vscode.py drives.
#
# Idempotent: everything lands under $CODESIFT_TOOLS (default ~/.cache/codesift-tools),
# outside the repository; a finished install is marked by a stamp and skipped.
# The install traps (see DESIGN.md): npm install with --ignore-scripts, then
# `npm rebuild` with libkrb5-dev & co present, and a real `rg` copied into
# @vscode/ripgrep/bin (its postinstall would download one; only registries are reachable).
set -euo pipefail

VERSION=4.99.4
PLAYWRIGHT=1.65.1
TOOLS="${CODESIFT_TOOLS:-$HOME/.cache/codesift-tools}"
CS="$TOOLS/code-server-$VERSION"
PW="$TOOLS/playwright-core-$PLAYWRIGHT"

export DEBIAN_FRONTEND=noninteractive
apt_pkgs=(chromium ripgrep libkrb5-dev pkg-config libx11-dev libxkbfile-dev libsecret-1-dev build-essential python3)
missing=()
for p in "${apt_pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  # Other installers may hold the dpkg lock (parallel CI jobs): wait for it.
  apt-get -o DPkg::Lock::Timeout=600 update -qq
  apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}"
fi

export npm_config_yes=true npm_config_unsafe_perm=true npm_config_fund=false npm_config_audit=false

if [ -f "$CS/.installed" ]; then
  echo "code-server $VERSION already in $CS"
else
  rm -rf "$CS"
  mkdir -p "$CS"
  (
    cd "$CS"
    echo '{"private":true}' > package.json
    npm install --no-save --ignore-scripts "code-server@$VERSION"
    cd node_modules/code-server/lib/vscode
    npm install --omit=dev --ignore-scripts
    mkdir -p node_modules/@vscode/ripgrep/bin
    cp "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg
    npm rebuild --foreground-scripts
    ln -sfn node_modules node_modules.asar
    ln -sfn code-linux.sh bin/remote-cli/code-server
    ln -sfn browser-linux.sh bin/helpers/browser.sh
    (cd extensions && npm install --omit=dev)
    cd ../../../..
    npm rebuild argon2
  )
  touch "$CS/.installed"
  echo "code-server $VERSION installed in $CS"
fi

if [ -f "$PW/.installed" ]; then
  echo "playwright-core $PLAYWRIGHT already in $PW"
else
  rm -rf "$PW"
  mkdir -p "$PW"
  (cd "$PW" && echo '{"private":true}' > package.json && npm install --no-save "playwright-core@$PLAYWRIGHT")
  touch "$PW/.installed"
  echo "playwright-core $PLAYWRIGHT installed in $PW"
fi

"$CS/node_modules/.bin/code-server" --version

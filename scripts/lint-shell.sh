#!/usr/bin/env bash
# ShellCheck every shell script in clients/ and scripts/. Installs shellcheck from the OS
# packages when it is missing (idempotent: apt-get on Debian/Ubuntu, as root or through sudo).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v shellcheck >/dev/null 2>&1; then
  echo "== installing shellcheck (OS package)"
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
      sudo=(sudo -n)
    else
      echo "error: shellcheck is missing and this is not root (install the shellcheck package)" >&2
      exit 1
    fi
  fi
  if command -v apt-get >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    if ! ${sudo[@]+"${sudo[@]}"} apt-get install -y -qq shellcheck >/dev/null 2>&1; then
      ${sudo[@]+"${sudo[@]}"} apt-get update -qq >/dev/null
      ${sudo[@]+"${sudo[@]}"} apt-get install -y -qq shellcheck >/dev/null
    fi
  else
    echo "error: shellcheck is missing and there is no apt-get here (install the shellcheck package)" >&2
    exit 1
  fi
fi

mapfile -t files < <(find clients scripts -type f -name '*.sh' 2>/dev/null | LC_ALL=C sort)
if [ "${#files[@]}" -eq 0 ]; then
  echo "no shell scripts found"
  exit 0
fi
echo "== shellcheck $(shellcheck --version | sed -n 's/^version: //p') on ${#files[@]} scripts"
shellcheck --external-sources "${files[@]}"
echo "== shellcheck: all clean"

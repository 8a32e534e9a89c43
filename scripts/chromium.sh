#!/usr/bin/env bash
# Makes sure Debian's headless browser pair is installed and prints the chromedriver path.
#
#   export CHROMEDRIVER=$(bash scripts/chromium.sh)
#
# The blog-assistant browser test drives Chromium through chromedriver (WebDriver over HTTP).
# `chromium` and `chromium-driver` come from the same Debian source package, so their versions
# always match, which chromedriver requires. Installs with apt-get when either is missing (CI runs
# as root); everything but the path goes to stderr so the output can be captured.
set -euo pipefail

find_driver() {
  command -v chromedriver 2>/dev/null && return 0
  [ -x /usr/bin/chromedriver ] && { echo /usr/bin/chromedriver; return 0; }
  return 1
}

have_browser() {
  command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ]
}

if ! have_browser || ! find_driver >/dev/null; then
  if [ "$(id -u)" != 0 ]; then
    echo "error: chromium/chromium-driver are missing and installing them needs root" >&2
    exit 1
  fi
  echo "== installing chromium and chromium-driver" >&2
  # A stale package list makes the install 404 on security updates: refresh it first.
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    chromium chromium-driver >/dev/null
fi

driver=$(find_driver) || { echo "error: chromedriver not found after install" >&2; exit 1; }
echo "$driver"

#!/bin/sh
# Debian's chromium and chromedriver for the browser tests (tests/serve/test_browser.py).
# Idempotent: does nothing when both are installed. No browser is downloaded by pip or at run time.
set -e
if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
    exit 0
fi
if [ "$(id -u)" != "0" ]; then
    echo "install_browser.sh: not root; install the Debian packages chromium and chromium-driver" >&2
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq chromium chromium-driver >/dev/null

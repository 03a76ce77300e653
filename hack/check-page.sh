#!/usr/bin/env bash
# check-page.sh PAGE [SCREENSHOT.png]: open an HTML page in a real headless
# browser (Debian's chromium, installed when missing) and fail unless it loads
# and every image on it renders. The page records its image counts in
# data-images / data-missing-images on <body> once loaded (routebench's page
# does). With SCREENSHOT, also save what the browser drew.
set -euo pipefail
page=$(realpath "$1")
shot=${2:-}
[ -f "$page" ] || { echo "check-page: no page at $1" >&2; exit 1; }
if ! command -v chromium > /dev/null; then
  echo "check-page: installing Debian's chromium (once; about a minute)..."
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends chromium > /dev/null
fi
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
  --disable-component-update --disable-sync --user-data-dir="$profile" --virtual-time-budget=10000)
dom=$(timeout 120 chromium "${flags[@]}" --dump-dom "file://$page" 2> "$profile/stderr") || {
  echo "check-page: chromium failed on $page:" >&2; tail -5 "$profile/stderr" >&2; exit 1; }
images=$(grep -o 'data-images="[0-9]*"' <<< "$dom" | grep -o '[0-9][0-9]*' || true)
missing=$(grep -o 'data-missing-images="[0-9]*"' <<< "$dom" | grep -o '[0-9][0-9]*' || true)
if [ -z "$images" ] || [ -z "$missing" ]; then
  echo "check-page: $page did not finish loading in the browser (no image counts on <body>)" >&2; exit 1
fi
if [ "$images" -eq 0 ] || [ "$missing" -ne 0 ]; then
  echo "check-page: $page: $missing of $images images did not render" >&2; exit 1
fi
if [ -n "$shot" ]; then
  timeout 120 chromium "${flags[@]}" --hide-scrollbars --window-size=1280,3000 --screenshot="$(realpath -m "$shot")" \
    "file://$page" 2> /dev/null
fi
echo "check-page: $page rendered all $images images in headless chromium${shot:+ (screenshot $shot)}"

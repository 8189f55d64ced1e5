#!/usr/bin/env bash
# Sign the .app with the hardened runtime and notarise the .dmg, when credentials are present.
#
# Needs: APPLE_SIGNING_IDENTITY ("Developer ID Application: Name (TEAMID)") in the keychain,
# and for notarisation APPLE_ID, APPLE_TEAM_ID and APPLE_APP_PASSWORD (an app-specific
# password). Without them this prints what it skipped and exits 0, so unsigned builds still
# succeed (users then open the app with right-click > Open the first time).
set -euo pipefail
cd "$(dirname "$0")/../.."
app="dist/LLM Hardware Advisor.app"
dmg=${1:-$(ls dist/*.dmg 2>/dev/null | head -1)}
entitlements=packaging/macos/entitlements.plist

if [ -z "${APPLE_SIGNING_IDENTITY:-}" ]; then
  echo "signing skipped: APPLE_SIGNING_IDENTITY is not set (unsigned build)"
  exit 0
fi
# sign every dylib and .so inside first, then the app (--deep is unreliable for nested code)
find "$app" -type f \( -name "*.dylib" -o -name "*.so" \) -print0 |
  xargs -0 codesign --force --timestamp --options runtime --entitlements "$entitlements" \
    --sign "$APPLE_SIGNING_IDENTITY"
codesign --force --timestamp --options runtime --entitlements "$entitlements" \
  --sign "$APPLE_SIGNING_IDENTITY" "$app"
codesign --verify --strict --verbose=2 "$app"

if [ -z "${APPLE_ID:-}" ] || [ -z "${APPLE_TEAM_ID:-}" ] || [ -z "${APPLE_APP_PASSWORD:-}" ]; then
  echo "notarisation skipped: APPLE_ID, APPLE_TEAM_ID or APPLE_APP_PASSWORD is not set"
  exit 0
fi
codesign --force --timestamp --sign "$APPLE_SIGNING_IDENTITY" "$dmg"
xcrun notarytool submit "$dmg" --apple-id "$APPLE_ID" --team-id "$APPLE_TEAM_ID" \
  --password "$APPLE_APP_PASSWORD" --wait
xcrun stapler staple "$dmg"
echo "signed and notarised: $dmg"

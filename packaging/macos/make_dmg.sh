#!/usr/bin/env bash
# Wrap dist/LLM Hardware Advisor.app in a compressed .dmg with an Applications shortcut.
set -euo pipefail
cd "$(dirname "$0")/../.."
version=$(python3 -c 'import importlib.metadata as m; print(m.version("llm-hardware-advisor"))')
app="dist/LLM Hardware Advisor.app"
out="dist/LLM-Hardware-Advisor-${version}-macos-arm64.dmg"
stage=$(mktemp -d)
cp -R "$app" "$stage/"
# the license and the third-party notices beside the app in the disk image (the app carries
# them inside too, and shows them under Help)
cp LICENSE "$stage/LICENSE.txt"
cp dist/advisor/THIRD_PARTY_NOTICES.txt "$stage/THIRD_PARTY_NOTICES.txt"
ln -s /Applications "$stage/Applications"
hdiutil create -volname "LLM Hardware Advisor" -srcfolder "$stage" -ov -format UDZO "$out"
rm -rf "$stage"
echo "$out"

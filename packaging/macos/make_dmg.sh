#!/usr/bin/env bash
# Wrap dist/LLM Hardware Advisor.app in a compressed .dmg with an Applications shortcut.
set -euo pipefail
cd "$(dirname "$0")/../.."
version=$(python3 -c 'import importlib.metadata as m; print(m.version("llm-hardware-advisor"))')
app="dist/LLM Hardware Advisor.app"
out="dist/LLM-Hardware-Advisor-${version}-macos-arm64.dmg"
stage=$(mktemp -d)
cp -R "$app" "$stage/"
ln -s /Applications "$stage/Applications"
hdiutil create -volname "LLM Hardware Advisor" -srcfolder "$stage" -ov -format UDZO "$out"
rm -rf "$stage"
echo "$out"

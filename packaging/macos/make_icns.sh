#!/usr/bin/env bash
# packaging/icon-1024.png -> packaging/advisor.icns (macOS tools: sips, iconutil)
set -euo pipefail
cd "$(dirname "$0")/.."
set_dir=$(mktemp -d)/advisor.iconset
mkdir -p "$set_dir"
for size in 16 32 128 256 512; do
  sips -z $size $size icon-1024.png --out "$set_dir/icon_${size}x${size}.png" >/dev/null
  double=$((size * 2))
  sips -z $double $double icon-1024.png --out "$set_dir/icon_${size}x${size}@2x.png" >/dev/null
done
iconutil -c icns "$set_dir" -o advisor.icns

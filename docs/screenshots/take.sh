#!/usr/bin/env bash
# Screenshots of every page of the real app window on a virtual screen (Xvfb), as a user sees
# it after one benchmark. Needs Debian's xvfb, xdotool and imagemagick, and Qt's xcb libraries
# (see the project README). Run from the repository root with the app installed:
#
#   docs/screenshots/take.sh            # writes docs/screenshots/*.png
#
# The benchmark is real (llama.cpp on a random-weight llama-3.2-1b Q4_0 file, about 4 minutes
# on 2 cores); its history lives in a scratch ADVISOR_HOME, not the user's.
set -euo pipefail
OUT="${OUT:-docs/screenshots}"
HOME_DIR="${ADVISOR_SHOT_HOME:-/tmp/advisor-shots-home}"
DISPLAY_NUM="${DISPLAY_NUM:-:97}"
export ADVISOR_HOME="$HOME_DIR"

if ! ls "$HOME_DIR"/data/runs/*.json >/dev/null 2>&1; then
  # two runs for the history page; the app reopens the newest
  advisor bench --synthetic qwen2.5-0.5b:q4_0 --pp 512 --tg 128 --reps 2 --quiet
  advisor bench --synthetic llama-3.2-1b:q4_0 --pp 512 --tg 128 --depth 0,4096 --batch 1,4 \
    --reps 2 --quiet
fi

Xvfb "$DISPLAY_NUM" -screen 0 1280x800x24 -nolisten tcp &
XVFB=$!
export DISPLAY="$DISPLAY_NUM"
trap 'kill $APP $XVFB 2>/dev/null || true' EXIT
sleep 1
advisor &
APP=$!
for _ in $(seq 60); do
  xdotool search --name "LLM Hardware Advisor" >/dev/null 2>&1 && break
  sleep 0.5
done
sleep 4 # detection (cached) and the resumed run

shot() { sleep "$2"; import -window root "$OUT/$1.png"; }
page() { xdotool mousemove 60 $((18 + 20 * $1)) click 1; }

page 0 && shot machine 2
page 1 && shot model 2
page 2 && shot benchmark 2
page 3 && shot charts 2
page 4 && sleep 3
# pick two upgrades to compare: filter, select the first row, ctrl-click the second
xdotool mousemove 990 85 click 1 && xdotool type "RTX 40" && sleep 2
xdotool mousemove 330 167 click 1 && sleep 0.5
xdotool keydown ctrl mousemove 330 197 click 1 keyup ctrl
shot compare 3
page 5 && shot history 2
echo "screenshots in $OUT"

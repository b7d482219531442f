#!/bin/sh
# Build the bot with make; the last line printed is the command that runs it.
# A file named no-legal beside this script makes the bot ignore the referee's `legal` request
# (docs/PROTOCOL.md, "Move generation"): a bot without that extension.
set -e
cd "$(dirname "$0")"
make --no-print-directory bot >&2
if [ -e no-legal ]; then
    echo "$(pwd)/bot --no-legal"
else
    echo "$(pwd)/bot"
fi

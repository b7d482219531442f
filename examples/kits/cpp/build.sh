#!/bin/sh
# Build the bot with make; the last line printed is the command that runs it.
set -e
cd "$(dirname "$0")"
make --no-print-directory bot >&2
echo "$(pwd)/bot"

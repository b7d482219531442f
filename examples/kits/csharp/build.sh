#!/bin/sh
# Build bot.exe with Mono's C# compiler; the last line printed is the command that runs it.
set -e
cd "$(dirname "$0")"
mcs -optimize+ -out:bot.exe Bot.cs >&2
echo "stdio:mono $(pwd)/bot.exe"

#!/bin/sh
# Build bot.exe with Mono's C# compiler; the last line printed is the command that runs it.
# The bot speaks the text protocol's `position` and `legal` extensions (docs/PROTOCOL.md, section
# 11); a file named no-legal beside this script leaves `legal` out: a bot without that extension.
set -e
cd "$(dirname "$0")"
mcs -optimize+ -out:bot.exe Bot.cs >&2
if [ -e no-legal ]; then
    echo "stdio:mono $(pwd)/bot.exe --arena-options=position"
else
    echo "stdio:mono $(pwd)/bot.exe --arena-options=position,legal"
fi

#!/bin/sh
# Build bot.jar with javac (no libraries); the last line printed is the command that runs it.
# The bot speaks the text protocol's `position`, `legal` and `ready` extensions (docs/PROTOCOL.md,
# section 11); a file named no-legal beside this script leaves `legal` out: a bot without it.
set -e
cd "$(dirname "$0")"
rm -rf build && mkdir -p build/classes
javac -d build/classes src/Bot.java >&2
jar --create --file bot.jar --main-class Bot -C build/classes . >&2
if [ -e no-legal ]; then
    echo "stdio:java -jar $(pwd)/bot.jar --arena-options=position,ready"
else
    echo "stdio:java -jar $(pwd)/bot.jar --arena-options=position,legal,ready"
fi

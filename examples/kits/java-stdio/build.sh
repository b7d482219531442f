#!/bin/sh
# Build bot.jar with javac (no libraries); the last line printed is the command that runs it.
# The bot speaks the text protocol's `position`, `legal` and `ready` extensions (docs/PROTOCOL.md,
# section 11); a file named no-legal beside this script leaves `legal` out: a bot without it.
set -e
cd "$(dirname "$0")"
# javac and jar are short JVM runs: the quick JIT alone (C1) makes them a third faster (README.md).
QUICK=-J-XX:TieredStopAtLevel=1
rm -rf build && mkdir -p build/classes
javac $QUICK -d build/classes src/Bot.java >&2
jar $QUICK --create --file bot.jar --main-class Bot -C build/classes . >&2
if [ -e no-legal ]; then
    echo "stdio:java -jar $(pwd)/bot.jar --arena-options=position,ready"
else
    echo "stdio:java -jar $(pwd)/bot.jar --arena-options=position,legal,ready"
fi

#!/bin/sh
# Build bot.jar, one runnable jar holding the bot and its two libraries; the last line printed is
# the command that runs it. The libraries: $JEROMQ_JAR and $MSGPACK_JAR if set, else the jars in
# lib/ (from Maven Central), else Debian's (apt-get install libjeromq-java libmsgpack-java).
# A file named no-legal beside this script makes the bot ignore the referee's `legal` request
# (docs/PROTOCOL.md, "Move generation"): a bot without that extension.
set -e
cd "$(dirname "$0")"
# javac and jar are short JVM runs: the quick JIT alone (C1) makes them a third faster (README.md).
QUICK=-J-XX:TieredStopAtLevel=1
find_jar() {  # find_jar NAME DEBIAN_PATH
    for jar in lib/"$1"-*.jar "$2"; do
        if [ -f "$jar" ]; then echo "$jar"; return; fi
    done
    echo "build.sh: no $1 jar: put one in lib/ or apt-get install $3" >&2
    exit 1
}
JEROMQ_JAR=${JEROMQ_JAR:-$(find_jar jeromq /usr/share/java/jeromq.jar libjeromq-java)}
MSGPACK_JAR=${MSGPACK_JAR:-$(find_jar msgpack-core /usr/share/java/msgpack-core.jar libmsgpack-java)}
rm -rf build && mkdir -p build/classes
javac $QUICK -d build/classes -cp "$JEROMQ_JAR:$MSGPACK_JAR" src/Bot.java >&2
(cd build/classes && for jar in "$JEROMQ_JAR" "$MSGPACK_JAR"; do
    case "$jar" in /*) ;; *) jar="../../$jar" ;; esac
    jar $QUICK xf "$jar"
done && rm -rf META-INF)
jar $QUICK --create --file bot.jar --main-class Bot -C build/classes . >&2
if [ -e no-legal ]; then
    echo "java -jar $(pwd)/bot.jar --no-legal"
else
    echo "java -jar $(pwd)/bot.jar"
fi

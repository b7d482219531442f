#!/bin/sh
# Nothing to build: check the script compiles, then print the command that runs the bot.
# The bot speaks the text protocol's `position` and `legal` extensions (docs/PROTOCOL.md, section
# 11); a file named no-legal beside this script leaves `legal` out: a bot without that extension.
set -e
cd "$(dirname "$0")"
python3 -m py_compile bot.py
if [ -e no-legal ]; then
    echo "stdio:python3 $(pwd)/bot.py --arena-options=position"
else
    echo "stdio:python3 $(pwd)/bot.py --arena-options=position,legal"
fi

#!/bin/sh
# Nothing to build: check the script compiles, then print the command that runs the bot.
set -e
cd "$(dirname "$0")"
python3 -m py_compile bot.py
echo "stdio:python3 $(pwd)/bot.py"

"""A bot process sealed off: how one untrusted program is started, contained and stopped.

- `launcher.py`: `BotProcess` (start in its limits, suspend, resume, stop, its log), bot commands;
  `interpreters.py`: which word of a command is a file;
- `limits.py`: the limits and the watchdog; `watchdog.py`: the watchdog's process; `cgroup.py`: a
  cgroup per bot; `sandbox.py`: the bubblewrap sandbox (the bot's view of the machine); `relay.py`:
  a TCP hop inside it for bots whose library lacks `ipc://`; `endpoint.py`: the bot's endpoint and
  token, its private socket.

Knows nothing of matches, games or the protocol's messages: the match (`arena/match/`) uses the
cell, never the other way. May import the standard library only.
"""

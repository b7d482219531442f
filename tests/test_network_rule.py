"""The network rule: nothing in tests/, benchmarks/, examples/ or bots/ connects to, or looks up,
any address but loopback. Our machines and CI may send packets only to 127.0.0.0/8 and ::1 (or
inside a network namespace a test makes itself, tests/netns.py).

The scan reads Python by its syntax tree: a call that reaches the network (`connect`,
`create_connection`, `getaddrinfo`, `urlopen`, ...) given a literal host, address or URL that is not
loopback, and a `curl`/`wget`/... command line handed to a call. Other code and scripts (C++, Java,
C#, shell, Makefiles) are read line by line: a network verb and a literal non-loopback address or
URL on one line. Code a test writes for something else to run is read too: every string literal in
the Python (a shell script, a `python3 -c` snippet, a bot's source) is read as Python where it
parses and line by line where it does not, and a `python3 -c "..."` on a line of a script is read
as Python (this file's own planted cases below are data for the scanner, never run: its strings are
not read). A TEST-NET address (RFC 5737, no host has it) is allowed only where the kernel is
asked for a route without sending: in a function that makes a UDP socket and sends nothing.
Prose (Markdown) is not scanned: it runs nowhere here (the Java kit's README tells a student's own
machine where to download its jars).
"""
from __future__ import annotations

import ast
import ipaddress
import re
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("tests", "benchmarks", "examples", "bots")
CODE_SUFFIXES = {".py", ".sh", ".cpp", ".hpp", ".h", ".c", ".java", ".cs", ".js", ".mjs", ".go", ".rs"}
CODE_NAMES = {"Makefile", "CMakeLists.txt", "build.sh", "Dockerfile"}

NET_CALLS = {"connect", "connect_ex", "create_connection", "getaddrinfo", "gethostbyname", "gethostbyname_ex",
             "gethostbyaddr", "getnameinfo", "sendto", "sendmsg", "urlopen", "Request", "HTTPConnection",
             "HTTPSConnection", "open_connection", "create_datagram_endpoint", "urlretrieve"}
"""Python calls that reach (or look up) the address they are given."""
COMMANDS = ("curl", "wget", "nc", "ncat", "ping", "dig", "nslookup", "host", "ssh", "scp", "telnet")
"""Programs that reach the network when handed an address on their command line."""
VERBS = re.compile(r"\b(connect|connect_ex|create_connection|getaddrinfo|gethostbyname|Socket|TcpClient|"
                   r"UdpClient|WebClient|HttpClient|fetch|urlopen|curl|wget|ncat|nc|ping|dig|nslookup|telnet|ssh|scp)\b")
"""A line of non-Python code that does one of these is checked for literal addresses."""
URL = re.compile(r"\b(?:tcp|udp|http|https|ws|wss|ftp|pgm|epgm)://(\[[^\]]+\]|[^/:\s\"'`]+)")
IPV4 = re.compile(r"(?<![\w.])(\d{1,3}(?:\.\d{1,3}){3})(?![\w.])")
PYTHON_C = re.compile(r"""\bpython(?:3(?:\.\d+)?)?\s+-c\s+("(?:[^"\\]|\\.)*"|'[^']*')""")
"""A `python3 -c "CODE"` on a line of a shell script: CODE is read as Python."""
HOSTNAME = re.compile(r"^(?=.*[a-zA-Z])[a-zA-Z0-9-]+(\.[a-zA-Z0-9-]+)+$")
TEST_NETS = [ipaddress.ip_network(n) for n in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24")]


def is_loopback(host: str) -> bool:
    host = host.strip("[]")
    if host in ("localhost", "*", "") or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


def is_test_net(host: str) -> bool:
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return any(address in net for net in TEST_NETS)


def hosts_in(text: str, *, bare_names: bool) -> list[str]:
    """The hosts a literal names: a URL's host, IPv4 literals, and (with `bare_names`, for the
    argument of a call that resolves or connects) a whole string that is an IP or a host name."""
    found = [m.group(1) for m in URL.finditer(text)] + IPV4.findall(text)
    if bare_names and not found:
        word = text.strip()
        try:
            ipaddress.ip_address(word.strip("[]"))
            found.append(word)
        except ValueError:
            if HOSTNAME.match(word) and not word.endswith((".py", ".sock", ".txt", ".json", ".toml")):
                found.append(word)
    return list(dict.fromkeys(found))


def _call_name(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ""


def _strings(node: ast.AST) -> list[str]:
    """The string literals in a call argument: itself, or the items of a tuple or list (an
    (address, port) pair, an argv)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List)):
        return [s for item in node.elts for s in _strings(item)]
    if isinstance(node, ast.JoinedStr):
        return [v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str)]
    return []


def _asks_route_only(function: ast.AST | None) -> bool:
    """True for a function that makes a UDP socket and sends nothing: its connect only picks a route."""
    if function is None:
        return False
    text = ast.unparse(function)
    return "SOCK_DGRAM" in text and not re.search(r"\.send(to|all|msg)?\(", text)


def _wrappers(tree: ast.AST) -> set[str]:
    """The module's own functions that reach the network (call one of NET_CALLS, or another such
    function): `_connect(host, port)` around `create_connection` is checked like it."""
    bodies = {f.name: {_call_name(c) for c in ast.walk(f) if isinstance(c, ast.Call)}
              for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
    found: set[str] = set()
    while True:
        more = {name for name, calls in bodies.items() if calls & (NET_CALLS | found)} - found
        if not more:
            return found
        found |= more


def scan_python(path: Path, source: str, *, first_line: int = 1, embedded: bool = False) -> list[str]:
    """What `source` reaches beyond loopback, as `path:line: ...` lines. `embedded`: a snippet written
    by a test (its top level counts as one function for the route question)."""
    tree = ast.parse(source, str(path))
    enclosing: dict[ast.AST, ast.AST] = {}
    for function in ast.walk(tree):
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for inner in ast.walk(function):
                enclosing.setdefault(inner, function)
    constants = {n.targets[0].id: n.value for n in ast.walk(tree)  # NAME = "..." or (...), at any level
                 if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)}
    reaching = set(NET_CALLS) | _wrappers(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _call_name(node)
        args = [constants.get(a.id, a) if isinstance(a, ast.Name) else a
                for a in [*node.args, *(k.value for k in node.keywords)]]
        hosts: list[str] = []
        for arg in args:
            strings = _strings(arg)
            if name in reaching:
                hosts += [h for s in strings for h in hosts_in(s, bare_names=True)]
            elif strings and strings[0].split()[:1] and strings[0].split()[0] in COMMANDS:  # an argv
                hosts += [h for s in strings for h in hosts_in(s, bare_names=False)]
        for host in hosts:
            if is_loopback(host):
                continue
            unit = enclosing.get(node, tree if embedded else None)
            route_only = name in ("connect", "connect_ex") and _asks_route_only(unit)
            if is_test_net(host) and route_only:
                continue
            found.append(f"{path}:{first_line + node.lineno - 1}: {name}(...) reaches {host}")
    if Path(path).resolve() != Path(__file__).resolve():
        for line, text in _literals(tree):
            found += scan_embedded(path, text, first_line + line - 1)
    return _once(found)


def _once(found: list[str]) -> list[str]:
    """One finding per line and host (a call's argument is also a literal read as code)."""
    seen: dict[tuple[str, str], str] = {}
    for line in found:
        place, host = line.split(": ", 1)[0], line.rstrip(")").rsplit("reaches ", 1)[-1]
        seen.setdefault((place, host), line)
    return list(seen.values())


def _literals(tree: ast.AST) -> list[tuple[int, str]]:
    """The module's string literals, an f-string's as one (each {...} read as `0`), with their lines."""
    parts = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in parts:
            found.append((node.lineno, node.value))
        elif isinstance(node, ast.JoinedStr):
            found.append((node.lineno, "".join(v.value if isinstance(v, ast.Constant) else "0"
                                               for v in node.values)))
    return [(line, text) for line, text in found if "\n" in text or " " in text]


def scan_embedded(path: Path, text: str, first_line: int) -> list[str]:
    """A string a test writes for something else to run: Python where it parses (dedented), else lines."""
    text = textwrap.dedent(text)
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return scan_text(path, text, first_line=first_line)
    return scan_python(path, text, first_line=first_line, embedded=True)


def scan_text(path: Path, source: str, *, first_line: int = 1) -> list[str]:
    """Lines with a network verb and a literal non-loopback address; a `python3 -c` read as Python."""
    found = []
    for number, line in enumerate(source.splitlines(), first_line):
        for match in PYTHON_C.finditer(line):
            code = match.group(1)[1:-1]
            code = re.sub(r'\\(["\\$`])', r"\1", code) if match.group(1)[0] == '"' else code
            found += scan_embedded(path, code, number)
        line = PYTHON_C.sub("python3 -c CODE", line)
        if not VERBS.search(line):
            continue
        for host in dict.fromkeys([m.group(1) for m in URL.finditer(line)] + IPV4.findall(line)):
            if not is_loopback(host):
                found.append(f"{path}:{number}: {line.strip()[:100]} (reaches {host})")
    return found


def scan_file(path: Path) -> list[str]:
    try:
        source = path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return []
    return scan_python(path, source) if path.suffix == ".py" else scan_text(path, source)


def scanned_files(root: Path) -> list[Path]:
    return sorted(p for folder in SCANNED for p in (root / folder).rglob("*")
                  if p.is_file() and (p.suffix in CODE_SUFFIXES or p.name in CODE_NAMES)
                  and not {".venv", "node_modules", "__pycache__", "build", "bin", "obj"} & set(p.parts))


def test_nothing_in_the_tree_reaches_beyond_loopback():
    files = scanned_files(ROOT)
    assert len(files) > 50  # the scan sees the tree
    assert [line for path in files for line in scan_file(path)] == []


PLANTED = [  # (file name, a planted line, the host the scan must name)
    ("probe.py", "import socket\nsocket.create_connection(('1.1.1.1', 53))\n", "1.1.1.1"),
    ("probe.py", "import socket\nsocket.getaddrinfo('example.com', 80)\n", "example.com"),
    ("probe.py", "import socket\ndef _connect(host, port):\n"
     "    return socket.create_connection((host, port))\n"
     "probe = lambda: _connect('1.1.1.1', 53)\n", "1.1.1.1"),  # through a wrapper, as attacks.py did
    ("probe.py", "import socket\ns = socket.socket()\ns.connect(('10.0.0.7', 22))\n", "10.0.0.7"),
    ("probe.py", "import zmq\nzmq.Context().socket(zmq.DEALER).connect('tcp://192.168.1.5:5555')\n",
     "192.168.1.5"),
    ("probe.py", "import subprocess\nsubprocess.run(['curl', '-s', 'https://pypi.org/simple/'])\n",
     "pypi.org"),
    ("probe.py", "import subprocess\nsubprocess.run('wget http://8.8.8.8/x', shell=True)\n", "8.8.8.8"),
    ("probe.py", "import urllib.request\nurllib.request.urlopen('http://example.org/')\n", "example.org"),
    ("probe.py", "import socket\nHOST = ('8.8.4.4', 53)\nsocket.create_connection(HOST)\n", "8.8.4.4"),
    ("probe.py", "import socket\ndef f():\n    s = socket.socket()\n    s.connect(('192.0.2.1', 9))\n",
     "192.0.2.1"),  # TEST-NET over TCP: a SYN would leave
    ("probe.py", 'import textwrap\nSCRIPT = textwrap.dedent(f"""\\\n    #!/bin/sh\n    cd {0}\n'
     "    python3 -c \"import socket; socket.create_connection(('1.1.1.1', 53), timeout=3)\" 2>/dev/null\n"
     '    """)\n', "1.1.1.1"),  # a shell script a test writes, as test_course_engine's build.sh did
    ("probe.py", "import subprocess\nimport sys\nsubprocess.run([sys.executable, '-c', "
     "'import socket; socket.getaddrinfo(\"example.net\", 80)'])\n", "example.net"),
    ("probe.py", "BOT = '''\nimport socket\ns = socket.socket()\ns.connect(('10.1.2.3', 80))\n'''\n",
     "10.1.2.3"),  # a bot's source a test writes
    ("probe.py", "SCRIPT = 'nc 10.9.8.7 22 < /dev/null'\n", "10.9.8.7"),
    ("build.sh", "#!/bin/sh\npython3 -c \"import socket; socket.create_connection(('9.9.9.9', 53))\"\n",
     "9.9.9.9"),
    ("build.sh", "#!/bin/sh\ncurl -LO https://repo1.maven.org/x.jar\n", "repo1.maven.org"),
    ("bot.cpp", 'socket.connect("tcp://203.0.113.9:5555");\n', "203.0.113.9"),
]


@pytest.mark.parametrize(("name", "line", "host"), PLANTED, ids=[f"{n}:{h}" for n, _, h in PLANTED])
def test_the_scan_fails_on_a_planted_line_and_names_it(tmp_path, name, line, host):
    (tmp_path / "tests").mkdir()
    planted = tmp_path / "tests" / name
    planted.write_text(line)
    found = [f for p in scanned_files(tmp_path) for f in scan_file(p)]
    assert len(found) == 1 and host in found[0] and str(planted) in found[0], found


ALLOWED = [
    "import socket\nsocket.create_connection(('127.0.0.1', 8000))\n",
    "import socket\ns = socket.socket()\ns.connect(('localhost', 8000))\n",
    "import socket\ns = socket.socket(socket.AF_INET6)\ns.connect(('::1', 8000))\n",
    "import zmq\nzmq.Context().socket(zmq.DEALER).connect('tcp://127.0.0.2:5555')\n",
    "import socket\ndef route():\n    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:\n"
    "        s.connect(('192.0.2.1', 9))\n        return s.getsockname()\n",
    "import os\nos.connect = None\nd = {}\nd.get('example.com')\n",
    "PROBE = '''\nimport socket\ndef route():\n"
    "    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:\n"
    "        s.connect(('192.0.2.1', 9))\n'''\n",  # a route question a test writes
    "SCRIPT = '''#!/bin/sh\npython3 -c \"import socket; "
    "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
    "s.connect(('192.0.2.1', 9))\"\n'''\n",
    "SCRIPT = 'python3 -c \"import socket; socket.create_connection((\\'127.0.0.1\\', 9))\"'\n",
]


@pytest.mark.parametrize("source", ALLOWED)
def test_the_scan_passes_loopback_and_a_route_question(tmp_path, source):
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "probe.py").write_text(source)
    assert [f for p in scanned_files(tmp_path) for f in scan_file(p)] == []

"""Make docs/img/neovim-diagnostics-hover.svg: the screen of a real Neovim
(its built-in LSP client, `ctxlint server` attached) on a copy of
examples/legacy_app, with the diagnostics and a hover open.

Neovim runs in a pseudo-terminal of a fixed size; what it writes there is
read by the `pyte` terminal emulator, and pyte's screen, cell by cell (the
characters and their colours), is written as SVG by rich. Nothing is drawn
by hand: the picture is what the terminal showed. Steps in
docs/img/editor_screenshot.lua.

    python3 -m pip install pyte rich   # doc-only: not ctxlint's dependencies
    python3 docs/img/make_editor_screenshot.py [OUT.svg]

Needs `nvim` (0.7 or later) and ctxlint importable by this Python.
"""

from __future__ import annotations

import fcntl
import io
import os
import pty
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

import pyte
from rich.console import Console
from rich.style import Style
from rich.terminal_theme import TerminalTheme
from rich.text import Text

REPO = Path(__file__).resolve().parents[2]
APP = "examples/legacy_app"
FILE = f"{APP}/model_runner.py"
COLUMNS, ROWS = 118, 38
# the unsaved line typed into the buffer: a seed read, a new CTX101 (an error;
# the example's pinned findings are hints)
NEW_LINE = "        self.load_format = get_server_args().load_format"
AFTER = 16  # below `self.dtype = get_server_args().dtype`
HOVER = "enable_torch_compile"  # the bag read `get_exec().enable_torch_compile`
OUT = REPO / "docs" / "img" / "neovim-diagnostics-hover.svg"

# desert's Normal (guifg=White guibg=grey20): the cells nvim leaves at the
# terminal's default colours are drawn in them
FOREGROUND, BACKGROUND = "#ffffff", "#333333"
THEME = TerminalTheme(
    (0x33, 0x33, 0x33),
    (0xFF, 0xFF, 0xFF),
    [
        (0, 0, 0),
        (205, 49, 49),
        (13, 188, 121),
        (229, 229, 16),
        (36, 114, 200),
        (188, 63, 188),
        (17, 168, 205),
        (229, 229, 229),
    ],
    [
        (102, 102, 102),
        (241, 76, 76),
        (35, 209, 139),
        (245, 245, 67),
        (59, 142, 234),
        (214, 112, 214),
        (41, 184, 219),
        (255, 255, 255),
    ],
)
ANSI = {"brown": "yellow"}  # pyte's name for ANSI 33


def tree(base: Path) -> Path:
    """The runtime, the example and its baseline, as the server tests copy them."""
    root = base / "repo"
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(REPO / "src" / "ctxrt", root / "src" / "ctxrt", ignore=skip)
    shutil.copytree(REPO / APP, root / APP, ignore=skip)
    shutil.copy2(REPO / "examples" / "__init__.py", root / "examples" / "__init__.py")
    (root / "baselines").mkdir()
    shutil.copy2(REPO / "baselines" / "legacy_app.json", root / "baselines" / "legacy_app.json")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def colour(name: str, default: str) -> str:
    """pyte's colour of a cell (a name, or six hex digits) as rich spells it."""
    if name == "default":
        return default
    if len(name) == 6 and all(c in "0123456789abcdefABCDEF" for c in name):
        return f"#{name}"
    bright = name.startswith("bright")
    base = ANSI.get(name.removeprefix("bright"), name.removeprefix("bright"))
    return f"bright_{base}" if bright else base


def run_nvim(root: Path, base: Path) -> pyte.Screen:
    """Neovim in a pseudo-terminal, fed to pyte until the hover is open and the
    screen has settled; then it quits."""
    ready = base / "ready"
    env = dict(os.environ) | {
        "TERM": "xterm-256color",
        "COLORTERM": "truecolor",
        "CTXLINT_FILE": FILE,  # relative: the status line shows it
        "CTXLINT_FOLDER": str(root / APP),
        "CTXLINT_PYTHON": sys.executable,
        "CTXLINT_NEW_LINE": NEW_LINE,
        "CTXLINT_AFTER": str(AFTER),
        "CTXLINT_HOVER": HOVER,
        "CTXLINT_READY": str(ready),
        "XDG_STATE_HOME": str(base / "state"),
        "XDG_CACHE_HOME": str(base / "cache"),
        "XDG_DATA_HOME": str(base / "data"),
        "XDG_CONFIG_HOME": str(base / "config"),
    }
    script = Path(__file__).with_name("editor_screenshot.lua")
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
    nvim = subprocess.Popen(
        ["nvim", "-u", "NONE", "-i", "NONE", "-c", f"luafile {script}"],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        cwd=root,
        start_new_session=True,
    )
    os.close(slave)
    screen = pyte.Screen(COLUMNS, ROWS)
    stream = pyte.ByteStream(screen)
    deadline = time.monotonic() + 180
    last_output = time.monotonic()
    try:
        while True:
            if time.monotonic() > deadline:
                raise SystemExit("the hover did not open within 180 s")
            if nvim.poll() is not None:
                raise SystemExit(f"nvim exited ({nvim.returncode}) before the hover opened")
            if select.select([master], [], [], 0.1)[0]:
                try:
                    data = os.read(master, 65536)
                except OSError:
                    data = b""
                if data:
                    stream.feed(data)
                    last_output = time.monotonic()
                    continue
            # the hover is open and nothing more was drawn for a second
            if ready.exists() and time.monotonic() - last_output > 1.0:
                return screen
    finally:
        if nvim.poll() is None:
            os.write(master, b"\x1b:qa!\r")
            try:
                nvim.wait(10)
            except subprocess.TimeoutExpired:
                nvim.kill()
        os.close(master)


def cell_style(cell: pyte.screens.Char) -> Style:
    fg, bg = colour(cell.fg, FOREGROUND), colour(cell.bg, BACKGROUND)
    if cell.reverse:
        fg, bg = bg, fg
    return Style(
        color=fg,
        bgcolor=bg,
        bold=cell.bold,
        italic=cell.italics,
        underline=cell.underscore,
        strike=cell.strikethrough,
    )


def svg(screen: pyte.Screen) -> str:
    console = Console(
        record=True,
        width=COLUMNS,
        file=io.StringIO(),  # the screen is wanted only as SVG
        color_system="truecolor",
        force_terminal=True,
        legacy_windows=False,
    )
    for row in range(ROWS):
        line = Text(no_wrap=True, end="\n")
        cells = screen.buffer[row]
        run, style = "", None
        for col in range(COLUMNS):  # runs of one style: one span each
            here = cell_style(cells[col])
            if here != style and run:
                line.append(run, style)
                run = ""
            run, style = run + (cells[col].data or " "), here
        line.append(run, style)
        console.print(line, overflow="crop", soft_wrap=True)
    return console.export_svg(title="nvim: ctxlint server", theme=THEME)


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else OUT
    if shutil.which("nvim") is None:
        print("make_editor_screenshot: nvim is not installed", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="ctxlint-screenshot-") as tmp:
        base = Path(tmp)
        screen = run_nvim(tree(base), base)
    text = "\n".join(screen.display)
    if HOVER not in text or "CTX101" not in text:
        print(f"make_editor_screenshot: the screen lacks the hover or the error:\n{text}")
        return 1
    out.write_text(svg(screen), encoding="utf-8")
    print(f"wrote {out}")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The property of issue 37: after every step of a random sequence of edits
(unsaved), comment and blank lines added (layout edits), saves, new files,
renames and deletions driven through a real LSP client, the server's
diagnostics equal `ctxlint check --no-cache --format json` on the same text. Open buffers are written to disk just before the batch check
(the same text the server holds; the server is told nothing of that write but
the save it would see anyway). A short sequence runs by default, longer ones
in the slow suite."""

from __future__ import annotations

import random

import pytest
from lspclient import APP, Session, batch, batch_keys
from lsprotocol import types

FILES = ["readback.py", "scheduler.py", "detokenizer.py", "model_runner.py", "launcher.py"]
PUBLISH = '    publish(server_args, role="scheduler")\n'
# what an edit appends to a file: findings of several rules, and nothing at all
ADDED = [
    "\n\ndef tp_now_{n}() -> int:\n    return get_server_args().tp_size\n",
    "\n\n# a comment, {n}\n",
    "\n\ndef flags_{n}() -> None:\n    get_flags().moe.runner_backend = 'triton'\n",
    "\n\ndef port_{n}() -> int:\n    return get_serving().port  # ctxlint: ignore[CTX101] no longer one\n",
]
HEADER = "from ctxrt.context import get_flags, get_server_args, get_serving\n"
NEW_FILE = HEADER + "\n\ndef seed_{n}() -> int:\n    return get_server_args().dp_size\n"


class Walk:
    def __init__(self, session: Session, rng: random.Random) -> None:
        self.session, self.rng = session, rng
        self.open: dict[str, str] = {}  # project path -> the buffer's text
        self.added: list[str] = []  # files the walk created
        self.n = 0

    def rel(self, name: str) -> str:
        return f"{APP}/{name}"

    def files(self) -> list[str]:
        every = [self.rel(f) for f in FILES] + self.added
        return [p for p in every if (self.session.root / p).exists()]

    async def step(self) -> str:
        s, rng = self.session, self.rng
        self.n += 1
        kind = rng.choice(["edit", "edit", "save", "new", "rename", "delete", "publish", "layout"])
        if kind in ("edit", "publish", "save", "layout"):
            rel = rng.choice(self.files())
            if rel not in self.open:
                self.open[rel] = s.open(rel)
                await s.settle()  # one check per message: each step then waits for one
            text = self.open[rel]
            if kind == "publish" and rel.endswith("scheduler.py"):
                text = (
                    text.replace(PUBLISH, "")
                    if PUBLISH in text
                    else text.replace(
                        "    scheduler = Scheduler(server_args)\n",
                        "    scheduler = Scheduler(server_args)\n" + PUBLISH,
                    )
                )
            elif (
                kind == "layout"
            ):  # a comment or blank line at a line's start (server.layout_edits)
                lines = text.splitlines(keepends=True)
                at = rng.randrange(len(lines) + 1)
                added = rng.choice(["\n", f"# layout {self.n}\n", f"    # layout {self.n}\n"])
                text = "".join([*lines[:at], added, *lines[at:]])
            else:
                if HEADER not in text:
                    text = HEADER + text
                text += rng.choice(ADDED).format(n=self.n)
            self.open[rel] = text
            s.change(rel, text)
            if kind == "save":
                await s.settle()
                s.save(rel, text)
            return f"{kind} {rel}"
        if kind == "new":
            rel = self.rel(f"added_{self.n}.py")
            (s.root / rel).write_text(NEW_FILE.format(n=self.n))
            self.added.append(rel)
            s.watched((rel, types.FileChangeType.Created))
            return f"new {rel}"
        pool = self.added or [self.rel("launcher.py")]
        rel = rng.choice(pool)
        if not (s.root / rel).exists():
            return await self.step()
        if rel in self.open:  # the editor closes it first, its text saved
            (s.root / rel).write_text(self.open.pop(rel))
            s.close(rel)
            await s.settle()
        if kind == "rename":
            to = self.rel(f"renamed_{self.n}.py")
            (s.root / rel).rename(s.root / to)
            self.added = [p for p in self.added if p != rel] + [to]  # (launcher.py too)
            s.watched((rel, types.FileChangeType.Deleted), (to, types.FileChangeType.Created))
            return f"rename {rel} {to}"
        (s.root / rel).unlink()
        self.added = [p for p in self.added if p != rel]
        s.watched((rel, types.FileChangeType.Deleted))
        return f"delete {rel}"

    def write_buffers(self) -> None:
        for rel, text in self.open.items():
            (self.session.root / rel).write_text(text)


async def walk(session: Session, seed: int, steps: int) -> None:
    root = session.root
    rng = random.Random(seed)
    w = Walk(session, rng)
    done: list[str] = []
    for _ in range(steps):
        done.append(await w.step())
        await session.settle()
        w.write_buffers()
        served, batched = session.all(), batch_keys(batch(root))
        diff = {
            p: (sorted(set(served.get(p, [])) ^ set(batched.get(p, []))))
            for p in set(served) | set(batched)
            if served.get(p) != batched.get(p)
        }
        assert not diff, f"seed {seed}, after {done}: served ^ batch: {diff}"


@pytest.mark.asyncio
async def test_random_steps_equal_the_batch_check(session: Session) -> None:
    await walk(session, seed=37, steps=4)


@pytest.mark.slow
@pytest.mark.asyncio
@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_longer_random_walks_equal_the_batch_check(session: Session, seed: int) -> None:
    await walk(session, seed=seed, steps=20)

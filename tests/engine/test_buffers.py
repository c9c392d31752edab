"""An editor's buffer of a file discovery does not list (the language server
checks the tree with each open buffer in place of its file): a new file not
saved yet is checked as the file it will be, and a file the config leaves out
(excluded, ignored by git, not Python) stays out. Both once crashed every
check with a KeyError while the buffer was open (a new user's walk, Neovim)."""

from __future__ import annotations

from pathlib import Path

from test_check_memo import LEGACY, _no_cache, _session, _shown
from test_rounds import _copy

from ctxlint import session
from ctxlint.discover.files import buffer_file

SEED_READ = (
    "from ctxrt.context import get_server_args\n\n\ndef f():\n    return get_server_args().port\n"
)


def test_a_new_buffer_is_checked_as_the_file_it_will_be(tmp_path: Path) -> None:
    root = _copy("legacy_app", tmp_path)
    rel = f"{LEGACY}/brand_new.py"
    out = session.check(_session(root), texts={rel: SEED_READ}).out
    assert any(f.path == rel and f.rule == "CTX101" for f in out.findings)
    (root / rel).write_text(SEED_READ)  # saved: the batch run agrees
    assert _shown(out) == _shown(_no_cache(root))


def test_a_buffer_the_config_leaves_out_stays_out(tmp_path: Path) -> None:
    root = _copy("legacy_app", tmp_path)
    (root / ".gitignore").write_text("scratch/\n")
    left_out = {
        "tools/helper.py": SEED_READ,  # excluded by the config ("*")
        f"{LEGACY}/scratch/notes.py": SEED_READ,  # ignored by git
        f"{LEGACY}/__pycache__/x.py": SEED_READ,  # a folder discovery skips
        f"{LEGACY}/README.txt": "get_server_args().port\n",  # not Python
    }
    out = session.check(_session(root), texts=left_out).out
    assert not {f.path for f in out.findings} & set(left_out)
    assert _shown(out) == _shown(_no_cache(root))
    config = _session(root).config
    for rel in left_out:
        assert buffer_file(config.root, config.src, config.exclude, rel) is None, rel
    found = buffer_file(config.root, config.src, config.exclude, f"{LEGACY}/brand_new.py")
    assert found is not None and found.module == "examples.legacy_app.brand_new"

"""The build's one extra step: the rule specs ship with the package.

The specs live at rules/*.md in the repository, beside their runtime examples
(the project's layout: one spec per rule, read by contributors and linked from
SARIF). A built package has no repository around it, so build_py copies them
into it as ctxlint/rules/<ID>.md, beside the rule modules, where
engine.registry.spec_path looks first. MANIFEST.in puts them in the sdist, so a
wheel built from it has them too. Everything else is in pyproject.toml.
"""

from __future__ import annotations

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

SPECS = Path(__file__).resolve().parent / "rules"
PACKAGED = Path("ctxlint") / "rules"  # where spec_path finds them in an installed package


class build_py_with_specs(build_py):
    def run(self) -> None:
        super().run()
        for source, built in self._specs():
            self.copy_file(str(source), built)

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        return [*super().get_outputs(include_bytecode), *(built for _, built in self._specs())]

    def _specs(self) -> list[tuple[Path, str]]:
        """(spec in the repository, its copy in the build); none for an editable
        install, which reads rules/ in the source tree."""
        if self.editable_mode:
            return []
        return [(s, str(Path(self.build_lib) / PACKAGED / s.name)) for s in _found()]


def _found() -> list[Path]:
    found = sorted(SPECS.glob("CTX*.md"))
    if not found:  # a package without its specs would explain nothing: fail the build
        raise SystemExit(f"no rule specs in {SPECS} (an sdist needs MANIFEST.in's rules/)")
    return found


setup(cmdclass={"build_py": build_py_with_specs})

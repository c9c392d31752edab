"""Method signatures against calls and overrides: what a call passes, what a
signature accepts, what an override owes its base.

A signature is the class index's param list (program.classes.Param:
[name, kind, default source | None], kinds po/pk/va/ko/vk); a call is its
CallShape: its positional count, `*args`, keywords and `**kwargs`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxlint.program.classes import MethodFacts, Param


@dataclass(frozen=True, slots=True)
class CallShape:
    """What a call passes (a typed fact: facts.typed)."""

    npos: int  # positional arguments, unpacked ones left out
    star: bool  # a `*args`
    kws: tuple[str, ...]  # the keywords, in order
    dstar: bool  # a `**kwargs`


def sig_text(params: list[Param]) -> str:
    """`(self, batch, /, k=1, *args, flag=False, **kw)`, from the param list."""
    parts: list[str] = []
    star_done = False
    for i, (name, kind, default) in enumerate(params):
        if kind == "va":
            parts.append(f"*{name}")
            star_done = True
            continue
        if kind == "vk":
            parts.append(f"**{name}")
            continue
        if kind == "ko" and not star_done:
            parts.append("*")
            star_done = True
        parts.append(f"{name}={default}" if default is not None else name)
        if kind == "po" and (i + 1 == len(params) or params[i + 1][1] != "po"):
            parts.append("/")
    return f"({', '.join(parts)})"


def bound(method: MethodFacts) -> list[Param]:
    """The params a caller of an instance's method supplies (self/cls dropped)."""
    params = method.params
    if method.flavor != "static" and params and params[0][1] in ("po", "pk"):
        return params[1:]
    return params


def call_problems(params: list[Param], call: CallShape) -> list[str]:
    """Why `call` cannot bind to `params`; nothing when it can or cannot be told."""
    positional = [p for p in params if p[1] in ("po", "pk")]
    has_va = any(p[1] == "va" for p in params)
    has_vk = any(p[1] == "vk" for p in params)
    out: list[str] = []
    npos = call.npos
    if npos > len(positional) and not has_va:  # unpacking can only add more
        out.append(f"{npos} positional arguments, the hook takes {len(positional)}")
    by_keyword = {p[0] for p in params if p[1] in ("pk", "ko")}
    for kw in call.kws:
        if kw not in by_keyword and not has_vk:
            out.append(f"unknown keyword `{kw}`")
    given = set(call.kws)
    if not (call.star or call.dstar):  # unpacked arguments may fill any positional
        for i, (name, _kind, default) in enumerate(positional):
            if default is None and i >= npos and name not in given:
                out.append(f"missing required `{name}`")
    if not call.dstar:
        for name, kind, default in params:
            if kind == "ko" and default is None and name not in given:
                out.append(f"missing required keyword `{name}`")
    return out


def accept_problems(impl: list[Param], base: list[Param], *, dispatched: bool) -> list[str]:
    """Where an override breaks the base hook's contract.

    Always: nothing newly required (a parameter the base lacks, or makes
    optional) and the base's required keyword-only parameters accepted. The
    base's required positional count, and a parameter the base makes optional
    and the override requires, matter only while no dispatch site is known:
    once one is, what the dispatch passes is checked call by call (a dispatch
    passing the base's parameters by keyword needs no positional slot for them;
    one that passes the optional parameter breaks nothing, one that omits it
    is a missing required argument there). A base catch-all (`*args`, `**kwargs`) declares no
    contract for what it absorbs.
    """
    b_pos = [p for p in base if p[1] in ("po", "pk")]
    i_pos = [p for p in impl if p[1] in ("po", "pk")]
    b_va = any(p[1] == "va" for p in base)
    b_vk = any(p[1] == "vk" for p in base)
    i_va = any(p[1] == "va" for p in impl)
    i_vk = any(p[1] == "vk" for p in impl)
    out: list[str] = []
    required = sum(1 for p in b_pos if p[2] is None)
    if not dispatched and not i_va and len(i_pos) < required:
        out.append(f"takes {len(i_pos)} positional arguments where the base passes {required}")
    for j, (name, kind, default) in enumerate(i_pos):
        if default is not None:
            continue
        if j >= len(b_pos) and not b_va and not (b_vk and kind == "pk"):
            # (a base `**kwargs` may carry it by keyword)
            out.append(f"requires `{name}`, which the base does not pass")
        elif j < len(b_pos) and b_pos[j][2] is not None and not dispatched:
            out.append(f"requires `{name}`, which the base makes optional")
    i_names = {p[0] for p in impl if p[1] in ("pk", "ko")}
    b_ko = {p[0]: p for p in base if p[1] == "ko"}
    for name, kind, default in impl:
        if kind == "ko" and default is None and name not in b_ko and not b_vk:
            out.append(f"requires keyword `{name}`, which the base does not pass")
    for name, (_, _, default) in sorted(b_ko.items()):
        if default is None and name not in i_names and not i_vk:
            out.append(f"does not accept keyword `{name}`")
        elif (
            default is not None
            and not dispatched
            and any(p[0] == name and p[2] is None and p[1] in ("pk", "ko") for p in impl)
        ):
            out.append(f"requires `{name}`, which the base makes optional")
    return list(dict.fromkeys(out))


def through_base(call: CallShape, base: list[Param]) -> CallShape:
    """The part of a dispatch call that the base's named parameters take: what
    a base catch-all absorbs is no implementation's contract."""
    named = {p[0] for p in base if p[1] in ("pk", "ko")}
    return CallShape(
        min(call.npos, sum(1 for p in base if p[1] in ("po", "pk"))),
        # what the catch-all carries is unknown: it may fill any further parameter
        call.star or any(p[1] == "va" for p in base),
        tuple(k for k in call.kws if k in named),
        call.dstar or any(p[1] == "vk" for p in base),
    )

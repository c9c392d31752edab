"""What a call hands its callee's parameters, as the call facts spell it
(program/flag_facts.py), for program.unset_flags (which tests hold in a call).

Positionals bind in order, keywords by name; a parameter the call leaves out
takes its literal default (FALSY, TRUTHY; none known: left unbound). A `**`
argument of a local dict built with literal keys only, and used for nothing
else (`kw = dict(a=x); f(**kw)`), binds those keywords. A caller's own star
parameters handed on (`super().__init__(*args, **kwargs)`) hand what the
caller's context says its caller bound: a name left out of its `**kwargs` takes
the callee's default, where its `*args` is known empty. Any other star
argument leaves every parameter the call does not name unbound.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ctxlint.program.call_model import Event
from ctxlint.program.calls import Func
from ctxlint.program.flag_facts import DICT, FALSY, TRUTHY, split_arg

# what a call hands a function, by parameter: `p` a value false before publish,
# `+p` a truthy one, `-p` nothing (a name its `**` parameter would take, left
# out: the default of the call it forwards to), `-*` (its `*` parameter is empty)
Context = frozenset[str]
EMPTY: Context = frozenset()
ABSENT = "-"
FORWARD = "@"  # a value the caller's own `*`/`**` parameter hands on (its context's)


def star_params(fn: Func | None) -> dict[str, str]:
    """`*` and `**` -> the names of the function's star parameters."""
    defaults = fn.flags.defaults if fn is not None and fn.flags is not None else ()
    out: dict[str, str] = {}
    for d in defaults:
        if d.startswith("*"):
            stars = "**" if d.startswith("**") else "*"
            out[stars] = d[len(stars) :]
    return out


def _dict(caller: Func | None, spelled: str) -> dict[str, str] | None:
    """The keywords `**name` binds, where `name` is a local bound once to a dict
    with literal keys and used for nothing else (program.flag_facts)."""
    if caller is None or caller.flags is None or not spelled.startswith("n:"):
        return None
    values = caller.flags.names.get(spelled[2:], ())
    if len(values) != 1 or not values[0].startswith(DICT):
        return None
    body = values[0][len(DICT) :]
    return dict(e.split("=", 1) for e in body.split(",")) if body else {}


@dataclass
class Spread:
    """A call's arguments, sorted: what binds by position and by name, and
    what star arguments leave unknown or hand on from the caller's own."""

    positional: list[str] = field(default_factory=list)
    keywords: dict[str, str] = field(default_factory=dict)
    open_pos: bool = False  # a star argument may bind any later positional
    open_kw: bool = False  # a `**` argument may bind any keyword
    on_pos: bool = False  # the caller's own `*args` handed on
    on_kw: bool = False  # the caller's own `**kwargs` handed on


def spread(event: Event, caller: Func | None, ctx: Context | None) -> Spread:
    """Sort the call's arguments (`ctx` None: whatever the caller's own star
    parameters hold, asked as FORWARD)."""
    split = [split_arg(a) for a in event.args]
    out = Spread([v for k, v in split if k is None])
    out.keywords = {k: v for k, v in split if k not in (None, "*", "**")}
    stars = star_params(caller)
    for k, v in split:
        if k == "*" and "*" in stars and v == f"n:{stars['*']}":
            out.on_pos = True
        elif k == "*":
            out.open_pos = True
        elif k == "**":
            unpacked = _dict(caller, v)
            if unpacked is not None:
                out.keywords = {**unpacked, **out.keywords}
            elif "**" in stars and v == f"n:{stars['**']}":
                out.on_kw = True
            else:
                out.open_kw = True
    if out.on_pos and ctx is not None and ABSENT + "*" not in ctx:
        out.open_pos = True  # the caller's `*args` may hold anything
    return out


def _handed_on(caller: Func | None, ctx: Context | None, p: str, default: str | None) -> str | None:
    """What the caller's `**kwargs` holds for `p` (its context's answer)."""
    if caller is not None and p in caller.params:
        return default  # a named parameter of the caller: never in its `**`
    if ctx is None:
        return FORWARD + p
    if p in ctx:
        return FALSY
    if TRUTHY + p in ctx:
        return TRUTHY
    return default if ABSENT + p in ctx else None


def binding(
    event: Event,
    callee: Func,
    caller: Func | None = None,
    ctx: Context | None = EMPTY,
    wanted: Iterable[str] = (),
) -> dict[str, str]:
    """Parameter -> the value the call spells for it, or the literal default it
    leaves it to; `wanted`: also names the callee's own `**` takes (ABSENT where
    the call leaves them out) and `*` (ABSENT: it is empty)."""
    args = spread(event, caller, ctx)
    defaults = callee.flags.defaults if callee.flags is not None else ()
    out: dict[str, str] = {}
    for i, p in enumerate(callee.params):
        default = FALSY if p in defaults else TRUTHY if TRUTHY + p in defaults else None
        value: str | None = None
        if i < len(args.positional):
            value = args.positional[i]
        elif p in args.keywords:
            value = args.keywords[p]
        elif args.open_pos or args.open_kw:
            continue
        else:
            value = _handed_on(caller, ctx, p, default) if args.on_kw else default
        if value is not None:
            out[p] = value
    takes_kw = "**" in star_params(callee)
    for name in wanted:
        value = None
        if name == "*":  # the callee's `*args`: empty where the call hands no positional
            if not (args.positional or args.open_pos):
                value = FORWARD + name if args.on_pos and ctx is None else ABSENT
        elif name not in callee.params and takes_kw and not args.open_kw:
            value = args.keywords.get(name)
            if value is None:
                value = _handed_on(caller, ctx, name, ABSENT) if args.on_kw else ABSENT
        if value is not None:
            out[name] = value
    return out


def bound(event: Event, callee: Func) -> list[tuple[str, str]]:
    """(parameter, value) for the callee's parameters the call spells or leaves
    to a literal default (FALSY, TRUTHY); a star argument leaves nothing out."""
    return list(binding(event, callee).items())

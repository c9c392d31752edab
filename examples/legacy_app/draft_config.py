"""Draft-model settings, declared the way the runtime's field classes are, but
never assembled into `ServerArgs`: the pre-migration shape, where the draft
worker parsed its own flags. Nothing projects these fields into a bag, so a
reader can only reach them through this module (CTX601 reports both classes).
"""

from __future__ import annotations


class DraftModelFields:
    _NS_PATH = "spec.draft"
    draft_model_path: str = ""
    draft_num_steps: int = 3


class DraftLoggingFields:
    _NS_PATH = "observability.draft"
    log_draft_acceptance: bool = False

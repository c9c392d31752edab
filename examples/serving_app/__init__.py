"""A small multi-process server on ctxrt.

The launcher builds and resolves the record, publishes it as ``tokenizer`` (the launch
path has no role of its own), and spawns a tokenizer, a scheduler and a detokenizer
process. Each publishes the record it was handed, under its role, at the top of its
entry function; queues connect them. Run it with ``python -m examples.serving_app``."""

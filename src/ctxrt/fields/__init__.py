"""Field classes: one class per config namespace, each carrying the ``_NS_PATH`` it
stands for. ``ctxrt.record.ServerArgs`` is assembled from them, and bag membership
is where a field is declared."""

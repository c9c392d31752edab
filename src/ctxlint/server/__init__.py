"""`ctxlint server`: the program model held resident for editors (LSP)."""

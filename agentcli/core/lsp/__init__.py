"""Code intelligence: language servers (specs.py: which; server.py: running them; tool.py: the lsp tool)."""

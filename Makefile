# `make install` puts the agentcli command in ~/.local/bin; `make demo` tries it without a key.
# `make run` and `make test` work in this clone; they build .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test bench clean install uninstall demo sandbox-tool acpx mcp-everything lsp-typescript

# The program is its own virtual environment in PREFIX/lib/agentcli and a link in PREFIX/bin (on your PATH).
# PREFIX/lib, the GNU libdir, is where a program's private files go; PREFIX/share is data, and with the
# default PREFIX ~/.local/share/agentcli is your data (agentcli/paths.py): sessions, transcripts, checkpoints
# and subagent worktrees, which install and uninstall never touch. Installs before this one kept the
# environment in that data folder (OLD_VENV): install and uninstall remove it, and only it.
PREFIX ?= $(HOME)/.local
APP_HOME = $(PREFIX)/lib/agentcli
APP_VENV = $(APP_HOME)/venv
OLD_VENV = $(PREFIX)/share/agentcli/venv
LINK = $(PREFIX)/bin/agentcli
# The link is removed only when it leads into our environment (not, say, to a pipx install).
OURS = case "$$(readlink '$(LINK)')" in '$(APP_VENV)'/*|'$(OLD_VENV)'/*) true;; *) false;; esac
# An old environment is removed only when it is one (pyvenv.cfg); the data beside it stays.
DROP_OLD_VENV = if [ -f '$(OLD_VENV)/pyvenv.cfg' ]; then rm -rf '$(OLD_VENV)' && \
	echo "Removed the old environment $(OLD_VENV); the data beside it stays."; \
	rmdir '$(PREFIX)/share/agentcli' 2>/dev/null || true; fi
# What uninstall leaves: the data and config folders, as agentcli reads them, that exist (paths.py needs nothing
# beyond the standard library); a folder agentcli never made is not named.
KEPT_DIRS = $(PYTHON) -c 'from agentcli.paths import data_home, config_home; \
	kept = [str(p) for p in (data_home(), config_home()) if p.exists()]; \
	print(("Your sessions and settings stay in %s: delete %s to remove them too." \
	       % (" and ".join(kept), "those folders" if len(kept) > 1 else "it")) if kept else "")'

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet --no-binary claude-agent-sdk -e '.[dev]'
	touch $(STAMP)

# AGENTCLI_FROM_MAKE: in a clone agentcli is not on PATH, so what agentcli suggests running says `make demo`.
run: $(STAMP)
	AGENTCLI_FROM_MAKE=1 $(BIN)/agentcli $(ARGS)

demo: $(STAMP)
	$(BIN)/agentcli --demo $(ARGS)

# INSTALL_PIP_ARGS: more arguments for that pip install, none by default; the install test passes a wheelhouse of the
# dependencies it built once (--no-index --find-links DIR), so it asks no index (docs/testing.md).
INSTALL_PIP_ARGS ?=
install:
	$(PYTHON) -m venv --clear $(APP_VENV)
	$(APP_VENV)/bin/python -m pip install --quiet --disable-pip-version-check $(INSTALL_PIP_ARGS) .
	mkdir -p $(PREFIX)/bin
	ln -sfn $(APP_VENV)/bin/agentcli $(LINK)
	@$(DROP_OLD_VENV)
	@case ":$$PATH:" in *":$(PREFIX)/bin:"*|*":$(PREFIX)/bin/:"*) \
		echo "Installed $(LINK). Now: cd your-repo && agentcli   (or agentcli --demo)";; \
	*) echo "Installed $(LINK), but $(PREFIX)/bin is not on your PATH: add it in your shell's startup file"; \
	   echo "(export PATH=\"$(PREFIX)/bin:\$$PATH\"), or run $(LINK) --demo to try it now.";; esac

uninstall:
	rm -rf $(APP_HOME)
	@if $(OURS); then rm -f '$(LINK)'; elif [ -e '$(LINK)' ]; then \
		echo "Left $(LINK) alone: it is not the link make install made."; fi
	@$(DROP_OLD_VENV)
	@echo "Removed agentcli from $(PREFIX)."
	@kept="$$($(KEPT_DIRS))"; [ -z "$$kept" ] || echo "$$kept"

# Three test processes on two cores: the workers wait on the programs they start more than they compute, so a third
# fills that wait; the suite holds under load with three too (docs/testing.md).
TEST_WORKERS ?= 3

# The import contracts, the linter, the formatter's check and the type checker (pyproject.toml:
# [tool.importlinter], [tool.ruff], [tool.mypy]) run beside pytest, on the CPU its workers leave while they wait on
# the programs they start; their output goes to CHECKS_LOG, and is shown, and fails the run, when one of them finds something (docs/testing.md).
# pytest runs with PYTHONDONTWRITEBYTECODE cleared (a shell may set it): with it, every agentcli, MCP server and
# helper process the tests start, and each worker's assertion rewriting, compiled its modules from source again, about
# a third of an agentcli start (docs/testing.md). The checks keep the caller's setting.
CHECKS_LOG := $(VENV)/checks.log
# mypy's cache lives beside the install test's wheels, outside the checkout: on a clean checkout (CI's) mypy then
# takes about 1 s of CPU instead of 30. It checks each file's hash, so every checkout can share it. Where that
# folder cannot be written, the checkout's own .mypy_cache (mypy stops with an internal error on a cache it cannot write).
MYPY_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/agentcli-tests/mypy
test: $(STAMP) sandbox-tool acpx mcp-everything lsp-typescript
	@( $(BIN)/lint-imports --no-cache && $(BIN)/ruff check agentcli tests bench && \
	   $(BIN)/ruff format --check agentcli tests bench && \
	   { cache='$(MYPY_CACHE)'; mkdir -p "$$cache" 2> /dev/null && [ -w "$$cache" ] || cache=.mypy_cache; \
	     MYPY_CACHE_DIR="$$cache" $(BIN)/mypy; } ) > $(CHECKS_LOG) 2>&1 & \
	checks=$$!; PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -n $(TEST_WORKERS) $(PYTEST_ARGS); tests=$$?; \
	if ! wait $$checks; then cat $(CHECKS_LOG); \
		echo "make: a check failed (lint-imports, ruff check, ruff format --check or mypy: its output is above, and in $(CHECKS_LOG))"; exit 1; fi; \
	exit $$tests

# acpx, a headless ACP client nobody here wrote, drives `agentcli acp` in tests/e2e/test_acp_acpx.py. It is
# installed from tests/acpx/package-lock.json (with the npm ACP SDK, whose schemas the ACP tests check messages
# against); without Node and npm, say so once and go on: that test skips.
acpx:
	@command -v npm > /dev/null || { echo "make: no npm, so the acpx test skips (install Node to run it)"; exit 0; }; \
	[ tests/acpx/node_modules/.package-lock.json -nt tests/acpx/package-lock.json ] || \
	npm install --prefix tests/acpx --no-audit --no-fund --no-update-notifier --ignore-scripts --loglevel=error

# npm's @modelcontextprotocol/server-everything, a server nobody here wrote, serves tests/e2e/test_mcp_everything.py;
# installed from tests/mcp_everything/package-lock.json like acpx, and skipped the same way without npm.
mcp-everything:
	@command -v npm > /dev/null || { echo "make: no npm, so the server-everything test skips (install Node to run it)"; exit 0; }; \
	[ tests/mcp_everything/node_modules/.package-lock.json -nt tests/mcp_everything/package-lock.json ] || \
	npm install --prefix tests/mcp_everything --no-audit --no-fund --no-update-notifier --ignore-scripts --loglevel=error

# typescript-language-server and typescript from npm serve tests/core/test_lsp_typescript.py; installed from
# tests/lsp_typescript/package-lock.json like acpx, and skipped the same way without npm.
lsp-typescript:
	@command -v npm > /dev/null || { echo "make: no npm, so the TypeScript language server test skips (install Node to run it)"; exit 0; }; \
	[ tests/lsp_typescript/node_modules/.package-lock.json -nt tests/lsp_typescript/package-lock.json ] || \
	npm install --prefix tests/lsp_typescript --no-audit --no-fund --no-update-notifier --ignore-scripts --loglevel=error

# The sandbox tests need bubblewrap (docs/permissions.md, "Sandbox"). As root on Debian (CI), install
# it; elsewhere, or where apt cannot, say so once and go on: those tests then skip, saying why.
sandbox-tool:
	@command -v bwrap > /dev/null && exit 0; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get > /dev/null; then \
		echo "Installing bubblewrap for the sandbox tests"; \
		(apt-get install -y -qq bubblewrap > /dev/null 2>&1 || \
		 (apt-get update -qq > /dev/null 2>&1 && apt-get install -y -qq bubblewrap > /dev/null 2>&1)) || \
		echo "Could not install bubblewrap with apt-get: the sandbox tests will skip."; \
	else \
		echo "bubblewrap (bwrap) is not installed: the sandbox tests will skip (apt-get install bubblewrap)."; \
	fi

bench: $(STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV)

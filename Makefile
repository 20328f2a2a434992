# `make install` puts the agentcli command in ~/.local/bin; `make demo` tries it without a key.
# `make run` and `make test` work in this clone; they build .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test bench clean install uninstall demo sandbox-tool

# Its own virtual environment under PREFIX/share, and a link in PREFIX/bin (on your PATH).
PREFIX ?= $(HOME)/.local
APP_VENV = $(PREFIX)/share/agentcli/venv

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet --no-binary claude-agent-sdk -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/agentcli $(ARGS)

demo: $(STAMP)
	$(BIN)/agentcli --demo $(ARGS)

install:
	$(PYTHON) -m venv --clear $(APP_VENV)
	$(APP_VENV)/bin/python -m pip install --quiet --disable-pip-version-check .
	mkdir -p $(PREFIX)/bin
	ln -sf $(APP_VENV)/bin/agentcli $(PREFIX)/bin/agentcli
	@echo "Installed $(PREFIX)/bin/agentcli. Now: cd your-repo && agentcli   (or agentcli --demo)"

uninstall:
	rm -rf $(PREFIX)/share/agentcli $(PREFIX)/bin/agentcli

# Two test processes, one a core: the suite holds under load (docs/testing.md) and takes half the time.
TEST_WORKERS ?= 2

test: $(STAMP) sandbox-tool
	$(BIN)/python -m pytest -n $(TEST_WORKERS) $(PYTEST_ARGS)

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

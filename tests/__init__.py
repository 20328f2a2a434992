"""agentcli's tests. They run with each dataclass method compiled when first called, as `agentcli` starts
(__main__.py, core/system/lazy_dataclasses.py): set here, before the tests import a dataclass."""

from agentcli.core.system.lazy_dataclasses import defer_dataclass_methods

defer_dataclass_methods()

"""OS helpers: the workspace, processes, the sandbox, secrets kept out of the environment, threads."""

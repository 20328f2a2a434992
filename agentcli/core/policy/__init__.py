"""How a tool call is judged: permission modes and rules, how a bash command line is read, hooks."""

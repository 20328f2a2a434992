"""What goes over the wire: the model client, request bodies, the early first request, credentials."""

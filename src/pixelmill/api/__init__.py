"""HTTP surfaces only: each module parses its request, calls one service, renders its shape."""

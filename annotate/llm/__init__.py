"""Providers that write the moral of a fable. No Django here: plain Python, tested alone."""

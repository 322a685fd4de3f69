"""janito-probes: one broken tool per toolset, each a bug the conformance kit must flag.

Every module is a toolset of its own (entry point ``probe_<module>``). Each tool breaks
exactly one rule and keeps every other, so the kit's findings for it can be compared
with one expected check.
"""

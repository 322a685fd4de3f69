"""janito-goodkit: a toolset that follows every rule; the conformance kit must pass it.

A class tool and function tools side by side, reading and writing only through the
workspace, failing with error and error_type, reporting on the reporter.
"""

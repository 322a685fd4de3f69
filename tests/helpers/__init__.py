"""Helpers for janito-core's own tests: real distributions on disk, probes in subprocesses."""

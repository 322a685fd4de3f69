"""The registry whose tool is running, so reports and nested calls reach its plugins."""

from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .registry import Registry

active_registry: ContextVar[Registry | None] = ContextVar("janito_active_registry", default=None)

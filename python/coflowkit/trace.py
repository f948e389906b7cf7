"""Traces: read them, or generate them (`coflowkit trace gen`)."""

from __future__ import annotations

from ._native import Trace, bundled_trace, gen_custom, gen_fb, parse_trace, read_trace

__all__ = ["Trace", "bundled_trace", "gen_custom", "gen_fb", "parse_trace", "read_trace"]

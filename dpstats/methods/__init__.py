"""Algorithms as plain functions of statistics or arrays, one module or subpackage per paper.

Each exposes a ``plan`` and a ``release``; no printing, no I/O, no R
(docs/architecture.md, "Adding a method").
"""

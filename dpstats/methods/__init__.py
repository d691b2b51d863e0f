"""Algorithms as plain functions of statistics or arrays (DESIGN §2.6): no I/O."""

"""Front doors (DESIGN §2.1): validate, then charge the budget, then compute."""

from .sis import dp_sis

__all__ = ["dp_sis"]

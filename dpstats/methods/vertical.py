"""The former name of :mod:`dpstats.methods.privreg` (the privreg algorithm behind :func:`dpstats.vertical_glm`).

vertical_glm's help named ``dpstats.methods.vertical.binomial_ridge_sensitivities`` and
``gaussian_ridge_sensitivities``, so that documented path keeps working; new code imports
:mod:`dpstats.methods.privreg`.
"""

from .privreg import *  # noqa: F403
from .privreg import __all__  # noqa: F401

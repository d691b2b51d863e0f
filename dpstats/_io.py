"""Low-level output helpers shared by every channel that writes or serialises a result.

:func:`jsonable` turns numpy/pandas values into plain JSON-able Python types (used by
``to_dict()``, the command line's ``--json`` and the R bridge); :func:`atomic_write`
writes a file through a temporary file so no half-written output is left behind (used
by ``to_json(path)``, ``report(path)``, the command line and the evaluation pages).
This module imports nothing of dpstats, so every layer may use it (``docs/architecture.md``,
"Layers"), and imports numpy and pandas only when :func:`jsonable` first runs, so that
``import dpstats`` stays fast.
"""

from __future__ import annotations

import math
import os
import tempfile
from typing import Any


def jsonable(obj: Any) -> Any:
    """Convert numpy/pandas values to plain Python types; non-finite floats to None/str.

    NaN becomes ``None`` and infinities the strings ``"Inf"``/``"-Inf"`` (what R's
    jsonlite reads back); mappings get string keys; anything else unknown becomes
    its ``str``.

    Parameters
    ----------
    obj : Any
        A value, possibly nested in dicts, lists, tuples, sets, arrays or data frames.

    Returns
    -------
    Any
        The same value built from ``dict``, ``list``, ``str``, ``int``, ``float``,
        ``bool`` and ``None`` only.

    Examples
    --------
    >>> import numpy as np
    >>> jsonable({"a": np.array([1.0, np.nan, np.inf]), 2: np.int64(3)})
    {'a': [1.0, None, 'Inf'], '2': 3}
    """
    import numpy as np
    import pandas as pd

    def convert(obj: Any) -> Any:
        if isinstance(obj, dict):
            return {str(k): convert(v) for k, v in obj.items()}
        if isinstance(obj, (list, tuple, set)):
            return [convert(v) for v in obj]
        if isinstance(obj, np.ndarray):
            return convert(obj.tolist())
        if isinstance(obj, (np.integer,)):
            return int(obj)
        if isinstance(obj, (np.bool_,)):
            return bool(obj)
        if isinstance(obj, (float, np.floating)):
            x = float(obj)
            if math.isnan(x):
                return None
            if math.isinf(x):
                return "Inf" if x > 0 else "-Inf"
            return x
        if isinstance(obj, pd.DataFrame):
            return convert(obj.to_dict(orient="list"))
        if obj is None or isinstance(obj, (str, int, bool)):
            return obj
        return str(obj)

    return convert(obj)


def atomic_write(path: str, text: str) -> None:
    """Write ``text`` to ``path`` via a temporary file so no half-written output is left behind.

    The file gets the permissions a plain ``open(path, "w")`` would give (``0o666``
    less the umask); on any error the temporary file is removed and ``path`` is
    left as it was.

    Parameters
    ----------
    path : str
        Destination file; its directory must exist.
    text : str
        Text written as UTF-8.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "out.txt")
    >>> atomic_write(path, "hello")
    >>> open(path, encoding="utf-8").read()
    'hello'
    """
    directory = os.path.dirname(os.path.abspath(path)) or "."
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".dpstats-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise

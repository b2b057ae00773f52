"""Fingerprint of an interpreter and the distributions installed in it.

A witness says which repository code a test ran; the code it ran *outside* the repository
(the interpreter, the installed libraries) is part of the ambient environment. This module
is stdlib only and runs both inside the recording pytest process and, as a script
(``python -c <this file's text>``), in the project's interpreter at gate time, so both sides
compute the fingerprint with the same code.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import sys


def describe() -> dict[str, object]:
    """The interpreter and every installed distribution (``name-version.dist-info``).

    Read from folder names on ``sys.path`` rather than through ``importlib.metadata``,
    which opens every METADATA file: ten times slower on a large environment.
    """
    dists: set[str] = set()
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        dists.update(n.lower() for n in names if n.endswith((".dist-info", ".egg-info")))
    return {
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "prefix": sys.prefix,
        "dists": sorted(dists),
    }


def distributions(description: dict[str, object]) -> list[str]:
    """The ``name-version`` of each distribution a description lists."""
    found = description.get("dists")
    names = found if isinstance(found, list) else []
    return sorted({str(n).rsplit(".", 1)[0] for n in names})


def fingerprint(description: dict[str, object]) -> str:
    text = json.dumps(description, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


if __name__ == "__main__":
    sys.stdout.write(json.dumps(describe()))

"""A PyPI sdist as a fresh folder: downloaded once into a cache folder, unpacked without its
top-level directory. The witness and mutation benchmarks both start from one."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
from pathlib import Path


def archive(dist: str, version: str, sdists: Path) -> Path:
    """The cached ``.tar.gz`` of ``dist==version``, downloaded from PyPI when missing."""
    found = _cached(dist, version, sdists)
    if found is None:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                        "--no-binary", ":all:", f"{dist}=={version}", "-d", str(sdists)],
                       check=True)
        found = _cached(dist, version, sdists)
    if found is None:
        raise SystemExit(f"pip downloaded no sdist of {dist}=={version} into {sdists}")
    return found


def _cached(dist: str, version: str, sdists: Path) -> Path | None:
    names = {f"{dist}-{version}.tar.gz", f"{dist.lower()}-{version}.tar.gz"}
    return next((sdists / n for n in sorted(names) if (sdists / n).is_file()), None)


def unpack(dist: str, version: str, sdists: Path, repo: Path) -> None:
    """``repo`` emptied and filled with the sdist's files (its top-level folder stripped)."""
    source = archive(dist, version, sdists)
    shutil.rmtree(repo, ignore_errors=True)
    repo.mkdir(parents=True)
    with tarfile.open(source) as tar:
        for member in tar.getmembers():
            member.name = member.name.split("/", 1)[1] if "/" in member.name else ""
            if member.name:
                tar.extract(member, repo, filter="data")

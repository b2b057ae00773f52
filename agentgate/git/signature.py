"""A commit's signature, verified by git itself against an allowed-signers file (issue 11
item 8: ``trust_signers``).

git verifies SSH signatures with ``ssh-keygen -Y verify`` against
``gpg.ssh.allowedSignersFile``; the file given here (the base's, read from the repository) is
the only one consulted. OpenPGP and X.509 signatures are refused: git would check them
against the machine's keyring, which is not the base's to decide.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from agentgate.git import gitio
from agentgate.git.scratch import scratch_dir

GOOD = "good"
# git's %G? letters (git log's PRETTY FORMATS) as the reason a signature does not count.
_WHY = {"N": "unsigned", "B": "bad signature", "U": "signer not allowed",
        "E": "signature cannot be checked", "X": "signature expired",
        "Y": "signing key expired", "R": "signing key revoked"}
_SSH_ARMOR = "-----BEGIN SSH SIGNATURE-----"
_SIG_HEADERS = ("gpgsig ", "gpgsig-sha256 ")


@dataclass(frozen=True)
class Signature:
    status: str  # GOOD, or why the signature does not count
    signer: str = ""  # for a good one: the allowed principal and its key's fingerprint

    @property
    def good(self) -> bool:
        return self.status == GOOD


def verify(root: Path, sha: str, allowed_signers: bytes) -> Signature:
    """Whether commit ``sha`` carries a good SSH signature by a key ``allowed_signers``
    (git's allowed-signers format) lists."""
    armor = _signature_armor(root, sha)
    if armor is None:
        return Signature("unsigned")
    if not armor.startswith(_SSH_ARMOR):
        return Signature("not an SSH signature (trust_signers checks SSH signatures only)")
    with scratch_dir("signers", root) as tmp:
        listed = tmp / "allowed_signers"
        listed.write_bytes(allowed_signers)
        out = gitio.run(root, "-c", f"gpg.ssh.allowedSignersFile={os.fspath(listed)}",
                        "log", "-1", "--format=%G?%x00%GS%x00%GK", sha, "--")
    letter, principal, key = [*os.fsdecode(out).strip("\n").split("\0"), "", ""][:3]
    if letter != "G":
        return Signature(_WHY.get(letter, f"signature status {letter!r}"))
    return Signature(GOOD, f"{principal} ({key})")


def _signature_armor(root: Path, sha: str) -> str | None:
    """The first line of the commit object's signature header, or None when unsigned."""
    raw = os.fsdecode(gitio.run(root, "cat-file", "commit", sha))
    for line in raw.split("\n\n", 1)[0].splitlines():
        if line.startswith(_SIG_HEADERS):
            return line.split(" ", 1)[1]
    return None

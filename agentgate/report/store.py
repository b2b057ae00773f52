"""The witness store's commands as text: ``witness record``, ``export``, ``import``, ``show``.
They have no markdown of their own beyond the common part."""

from __future__ import annotations

import time

from agentgate.witness.manage import Exported, Imported, Recorded, Shown

StoreDetail = Exported | Imported | Shown | Recorded

_SHOWN_INCOMPLETE = 20


def text(detail: StoreDetail) -> list[str]:
    if isinstance(detail, Exported):
        return [f"exported {detail.copied} witness(es) to {detail.file}"]
    if isinstance(detail, Imported):
        return _imported(detail)
    if isinstance(detail, Shown):
        return _shown(detail)
    return _recorded(detail)


def markdown(detail: StoreDetail) -> list[str]:
    return []


def _imported(detail: Imported) -> list[str]:
    lines = [f"imported {detail.imported} witness(es) from {detail.source}"]
    if detail.kept:
        lines.append(f"kept {detail.kept} already stored (pass --replace to overwrite them)")
    if detail.unknown:
        lines.append(f"{detail.unknown} recorded at commits not in this clone (git fetch)")
    return lines


def _shown(detail: Shown) -> list[str]:
    rows = detail.witnesses
    lines = [f"{len(rows)} witness(es) in {detail.store}"] if rows else ["no witness stored"]
    lines += [f"  {w.revision[:12]}  {_when(w.recorded_at)}  {w.tests} tests, {w.incomplete} "
              f"incomplete" for w in rows]
    if detail.test is not None:
        name, view = detail.test
        lines.append(f"{name}: {'complete' if view.complete else view.reason}")
        lines += [f"  {path}: {', '.join(names)}" for path, names in view.depends_on.items()]
    return lines


def _recorded(detail: Recorded) -> list[str]:
    lines = [
        f"witness {detail.witness[:12]}: {detail.tests} tests recorded"
        + (" (replaced the previous recording)" if detail.replaced else ""),
        f"incomplete (always run): {len(detail.incomplete)}",
    ]
    lines += [f"  {n}: {why}" for n, why in detail.incomplete[:_SHOWN_INCOMPLETE]]
    return lines


def _when(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(stamp))

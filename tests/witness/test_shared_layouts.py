"""The children of one recording share each file's block layout (``units.layout_of``): the
first child that ran a file parses it, the others read it back by the hash of its bytes.
pyflakes' integration tests start a Python child per test, and each parsed checker.py."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentgate.witness import units

SOURCE = ("import os\n\n\ndef first():\n    return 1\n\n\nclass Box:\n"
          "    def put(self, x):\n        return x\n")


@pytest.fixture
def shared(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "agentgate-layouts"
    saved, units.LAYOUTS[0] = units.LAYOUTS[0], str(folder)
    try:
        yield folder
    finally:
        units.LAYOUTS[0] = saved


def _fresh(path: Path) -> None:
    units._PARSED.pop(str(path), None)  # as in another child: nothing parsed yet


def test_a_layout_parsed_once_is_read_back_the_same(shared: Path, tmp_path: Path) -> None:
    path = tmp_path / "app.py"
    path.write_text(SOURCE)
    first = units.layout_of(str(path))
    assert first is not None and [b.name for b in first.blocks] == ["first", "Box.put"]
    assert len(os.listdir(shared)) == 1
    _fresh(path)
    again = units.layout_of(str(path))
    assert again == first
    # Read back, not parsed: what the folder says is what another child gets.
    [stored] = shared.iterdir()
    stored.write_text(stored.read_text().replace('"Box.put"', '"Box.put#seen"'))
    _fresh(path)
    read = units.layout_of(str(path))
    assert read is not None and [b.name for b in read.blocks] == ["first", "Box.put#seen"]


def test_a_file_with_other_bytes_is_parsed_for_itself(shared: Path, tmp_path: Path) -> None:
    path = tmp_path / "app.py"
    path.write_text(SOURCE)
    units.layout_of(str(path))
    path.write_text(SOURCE.replace("return 1", "return 1 + 1\n\n\ndef second():\n    pass"))
    _fresh(path)
    layout = units.layout_of(str(path))
    assert layout is not None and [b.name for b in layout.blocks] == ["first", "second", "Box.put"]
    assert len(os.listdir(shared)) == 2


def test_a_damaged_shared_layout_is_parsed_again(shared: Path, tmp_path: Path) -> None:
    path = tmp_path / "app.py"
    path.write_text(SOURCE)
    expected = units.layout_of(str(path))
    [stored] = shared.iterdir()
    stored.write_text("[[1, 2]]")  # not a layout
    _fresh(path)
    assert units.layout_of(str(path)) == expected
    _fresh(path)
    assert units.layout_of(str(path)) == expected  # and stored right again


def test_the_recording_process_keeps_its_own_parse(tmp_path: Path) -> None:
    path = tmp_path / "app.py"
    path.write_text(SOURCE)
    assert units.LAYOUTS[0] is None
    layout = units.layout_of(str(path))
    assert units._PARSED[str(path)][1] == layout and units._PARSED[str(path)][0] is not None

"""The import graph: value types, scanners, resolution, build, cache, reversed edges."""

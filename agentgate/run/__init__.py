"""Running the project's tests: interpreter, pinned environment, band, outcomes."""

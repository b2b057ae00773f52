"""The pure planner: impact set, pytest configuration, dependency rules, markers."""

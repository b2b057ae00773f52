"""The sequencing of the stages: plan/check, hooks, thaw, init, demo, fixtures."""

"""Flake attribution: runs on base and head, verdict, statistics, freeze."""

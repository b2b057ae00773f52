"""Typed records, configuration, errors and path rules: what every stage shares."""

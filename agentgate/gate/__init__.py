"""The trust gate: trust files, declared scope, fixture manifest, agent identification."""

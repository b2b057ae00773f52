from __future__ import annotations

from agentgate.cli.app import main

raise SystemExit(main())

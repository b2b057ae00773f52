"""What the tests share, in one place; no test module imports another.

- git_repo: real repositories in temporary folders (``GitRepo``), ``run_agentgate``.
- ledger: freeze records that pass every rule unless told otherwise.
- chain_app: the app whose tests reach its code through three import shapes.
- e2e_project: the example project, its staged edits, running git and reading its hooks.
- hook_drivers: plain ``hooks/`` and the pre-commit framework behind one interface.
"""

"""The only code that runs git; worktrees and scratch folders."""
